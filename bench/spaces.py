"""What memory spaces cost a search: the same padded store timed before and after a space exists in it."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval import default_eval_dir  # noqa: E402
from perf import MODES, machine, make_corpus, pad_chunks, sample_queries, source_files, time_modes  # noqa: E402
from indexer import config as config_mod  # noqa: E402
from indexer.memory import Memory  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", type=int, default=20000, help="store size in chunks (padded)")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mdmem-spaces-"))
    try:
        home = work / "home"
        make_corpus(home, 200, source_files(args.eval_dir))
        cfg = config_mod.load(home=home, env={})
        with Memory(cfg=cfg) as mem:
            mem.index()
        pad_chunks(home, args.chunks, cfg)
        queries = sample_queries(args.eval_dir, args.queries)
        res = {"machine": machine(), "chunks": args.chunks, "queries": len(queries), "repeat": args.repeat}
        with Memory(cfg=cfg) as mem:
            mem.index()
            res["no_space_in_store"] = time_modes(lambda q, m: mem.search(q, mode=m, limit=10, bump=False),
                                                  queries, MODES, args.repeat)
            mem.add("Miso the grey cat sleeps on the piano.", type="fact", space="alice")
            res["default_space_with_a_space_in_store"] = time_modes(
                lambda q, m: mem.search(q, mode=m, limit=10, bump=False), queries, MODES, args.repeat)
            res["inside_the_space"] = time_modes(lambda q, m: mem.search(q, mode=m, limit=10, bump=False, space="alice"),
                                                 queries, MODES, args.repeat)
        res["ratio_p50_default_space"] = {m: round(res["default_space_with_a_space_in_store"][m]["p50_ms"]
                                                   / res["no_space_in_store"][m]["p50_ms"], 2) for m in MODES}
        text = json.dumps(res, indent=2, ensure_ascii=False)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
