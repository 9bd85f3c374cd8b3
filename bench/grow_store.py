"""Build a store from the perf corpus and keep padded copies of it (e.g. 100k and 1M chunks) for `perf.py --search-home`."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import cli_env, default_eval_dir  # noqa: E402
from perf import make_corpus, pad_chunks, source_files, timed_cli  # noqa: E402

from indexer import config as config_mod  # noqa: E402
from indexer.index import db, sql  # noqa: E402


def mark_chunked(home: Path, cfg) -> None:
    """A build stopped during its ranking-model fill has not written which chunking its notes have: write
    it, or the daemon reads every note again at start (its notes are the chunker's, as a finished build's)."""
    from indexer.sync.store_sync import CHUNKING_KEY, CHUNKER_VERSION, chunking_id
    con = db.connect(home / "index.db")
    with db.transaction(con):
        sql.write_meta(con, {CHUNKING_KEY: chunking_id(cfg), "chunker": CHUNKER_VERSION})
    con.close()


def lend_e5(home: Path) -> int:
    """Texts the build had not given a ranking-model vector yet get another text's (timing only: no
    background fill then runs while search is timed); returns how many."""
    con = db.connect(home / "index.db")
    have = list(sql.e5_vectors(con, [r["content_hash"] for r in db.rows(con, "SELECT content_hash FROM chunks")]).values())
    missing = sql.e5_missing(con, 10**7)
    if have and missing:
        with db.transaction(con):
            sql.put_e5(con, {m["content_hash"]: have[i % len(have)] for i, m in enumerate(missing)})
    con.close()
    return len(missing) if have else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--chunks", default="100000,1000000", help="padded copies to keep (comma list)")
    ap.add_argument("--work", type=Path, required=True, help="folder that keeps base/ and pad<N>/ homes")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = ap.parse_args()
    env = cli_env({})
    os.environ.update({k: v for k, v in env.items() if k.startswith(("MDMEM_", "HF_"))})
    base = args.work / "base" / "home"
    if not (base / "index.db").exists():
        base.mkdir(parents=True, exist_ok=True)
        make_corpus(base, args.files, source_files(args.eval_dir))
        print(json.dumps({"cold": timed_cli(base, ["index"], env), "load": os.getloadavg()}), flush=True)
    cfg = config_mod.load(home=base, env=env)
    mark_chunked(base, cfg)
    for target in (int(x) for x in args.chunks.split(",") if x):
        home = args.work / f"pad{target}" / "home"
        if (home / "index.db").exists():
            continue
        shutil.rmtree(home.parent, ignore_errors=True)
        shutil.copytree(base, home, ignore=shutil.ignore_patterns("*.sock", "serve-*.log"))
        t0 = time.perf_counter()
        lent = lend_e5(home)
        have = pad_chunks(home, target, cfg)
        print(json.dumps({"padded": have, "e5_lent": lent, "s": round(time.perf_counter() - t0, 1), "home": str(home),
                          "load": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
