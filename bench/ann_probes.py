"""Recall@10 and latency of a store's IVF lists at several probe counts, against sqlite-vec's exact scan."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import default_eval_dir  # noqa: E402
from perf import percentiles, sample_queries  # noqa: E402

from indexer.index import sql  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.kept import vector_ann  # noqa: E402
from indexer.embedder import one_blas_thread  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--shares", default="64,32,16,8", help="probe 1/share of the lists (comma list)")
    args = ap.parse_args()
    queries = sample_queries(default_eval_dir(), args.queries)
    one_blas_thread()  # as a serving process runs its kept copies
    with Memory(home=args.home) as mem:
        st = mem.stores("global")[0]
        lists = vector_ann.AnnVectors(os.path.realpath(st.index_path))
        t0 = time.perf_counter()
        with lists.lock:
            lists.refresh(st.con)
        lists.wait()
        print(f"lists ready in {time.perf_counter() - t0:.1f} s: {lists.rows} rows, {lists._index.nlist} lists,"
              f" {lists.nbytes() / 2**20:.0f} MB, load {os.getloadavg()[0]:.1f}", flush=True)
        vecs = [mem.embedder.embed_query(q) for q in queries]
        exact = [{r["id"] for r in sql.vector_search(st.con, v, 10)} for v in vecs]
        for share in (int(s) for s in args.shares.split(",")):
            vector_ann.probes = lambda nlist, share=share: max(8, nlist // share)
            times, recalls = [], []
            for v, want in zip(vecs, exact):
                t0 = time.perf_counter()
                got = {cid for cid, _s in lists.search(st.con, v, 10)}
                times.append((time.perf_counter() - t0) * 1000)
                recalls.append(len(got & want) / max(1, len(want)))
            p = percentiles(times)
            print(f"1/{share} of the lists | recall@10 {statistics.mean(recalls):.4f} (min {min(recalls):.2f})"
                  f" | p50 {p['p50_ms']} ms | p95 {p['p95_ms']} ms | load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
