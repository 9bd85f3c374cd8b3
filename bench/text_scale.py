"""Full text on a big store: FTS5 scoring every row, the pruned search, and the kept common words, side by side.

    python bench/text_scale.py --home W/pad1000000/home [--queries 60] [--k 50]

The perf questions' MATCH expressions (and their feedback searches' words) are ranked three ways on one
connection: FTS5 alone (every row holding a word scored), the pruned top k (index/sql/fts_topk), and the kept
common words (kept/word_postings with FTS5 for the rarer words). Prints p50 / p95 of each, whether
the kept words gave FTS5's own top k (same rows, scores within 1e-9), what the copy costs to make and to read
back, and its size on disk and in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import default_eval_dir  # noqa: E402
from perf import sample_queries  # noqa: E402

from indexer.index import db, sql  # noqa: E402
from indexer.index.sql import fts_topk  # noqa: E402
from indexer.notes.textseg import fts_match_expression  # noqa: E402
from indexer.retrieval import full_text  # noqa: E402
from indexer.kept.word_postings import WordPostings  # noqa: E402


def pct(ms: list[float]) -> dict:
    s = sorted(ms)
    return {"p50_ms": round(statistics.median(s), 1), "p95_ms": round(s[int(0.95 * (len(s) - 1))], 1),
            "max_ms": round(s[-1], 1)}


def timed(fn) -> tuple[object, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--k", type=int, default=50, help="candidates asked for (the hybrid pool is 50)")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--fresh", action="store_true", help="make the copy again instead of reading the saved one")
    args = ap.parse_args()
    path = str((args.home / "index.db").resolve())
    con = db.connect(path, readonly=True)
    out: dict = {"home": str(args.home), "chunks": sql.fts_totals(con)[0], "load_before": os.getloadavg()}
    rss0 = psutil.Process().memory_info().rss
    if args.fresh:
        for suffix in (".words", ".words.npz"):
            Path(path + suffix).unlink(missing_ok=True)
    words = WordPostings(path)
    t0 = time.perf_counter()
    with words.lock:
        words.refresh(con)
    words.wait()
    out["copy_ready_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    again = WordPostings(path)
    with again.lock:
        again.refresh(con)
    again.wait()
    out["copy_read_back_s"] = round(time.perf_counter() - t0, 2)
    snap = words._snap
    out["common_words"] = len(snap.terms)
    out["postings"] = snap.postings
    out["file_mb"] = round((os.path.getsize(path + ".words") + os.path.getsize(path + ".words.npz")) / 2**20, 1)
    out["rss_added_mb"] = round((psutil.Process().memory_info().rss - rss0) / 2**20, 1)
    matches = []
    for q in sample_queries(args.eval_dir, args.queries):
        m = fts_match_expression(q)
        if m:
            matches.append(m)
    times: dict[str, list[float]] = {"fts5": [], "pruned": [], "kept_words": []}
    same = answered = 0
    for m in matches[:3]:  # warm the caches alike
        fts_topk._plain(con, m, args.k, "", ())
    chunks = sql.chunk_count(con)
    for m in matches:
        want, t = timed(lambda: fts_topk._plain(con, m, args.k, "", ()))
        times["fts5"].append(t)
        _got, t = timed(lambda: fts_topk.top_rowids(con, m, args.k, chunks))
        times["pruned"].append(t)
        got, t = timed(lambda: full_text.top_rowids(words, con, m, args.k))
        if got is None:  # no common word in the question: FTS5 answers, as the daemon does
            got, t2 = timed(lambda: fts_topk.top_rowids(con, m, args.k, chunks))
            t += t2
        else:
            answered += 1
        times["kept_words"].append(t)
        same += [r for r, _s in got] == [r for r, _s in want] and all(
            abs(a[1] - b[1]) <= 1e-9 * max(1.0, abs(b[1])) for a, b in zip(got, want))
    out.update({name: pct(ms) for name, ms in times.items()})
    out.update({"queries": len(matches), "answered_by_kept_words": answered, "same_top_k": same,
                "load_after": os.getloadavg()})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
