"""From the pools bench/e5_stage.py collected: how e5 cosine predicts relevance (a fixed logistic map a caller
can threshold) and how far below the best cosine the answers lie (recall's cut-off)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e5_stage import REPO, SetRun, load_score, minmax  # noqa: E402
from eval import default_eval_dir, load_queries  # noqa: E402


def pools(run: SetRun, n: int):
    """Per query: e5 cosines of the top n of the live ranking and whether each hits a relevant range."""
    for q in run.queries:
        ids = run.base(q)[0][:n]
        if not ids:
            continue
        rel = [(r["uri"], r["start_line"], r["end_line"]) for r in q["relevant"]]
        hit = [any(r["uri"] == u and r["start_line"] <= b and a <= r["end_line"] for u, a, b in rel)
               for r in (run.rows[run.pos[i]] for i in ids)]
        yield q, run.cos(q["qid"], ids), np.array(hit)


def logistic(x: np.ndarray, y: np.ndarray, steps: int = 4000) -> tuple[float, float]:
    a, b, lr = 0.0, 0.0, 1.0
    xm, xs = x.mean(), x.std() or 1.0
    z = (x - xm) / xs
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a * z + b)))
        a -= lr * float(np.mean((p - y) * z))
        b -= lr * float(np.mean(p - y))
    return a / xs, b - a * xm / xs  # on raw cosines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--sets", default="zh-memory-dev,locomo-facts-dev,cmrc2018-dev,locomo-dev,rgb-zh-dev")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work")
    ap.add_argument("--n", type=int, default=30)
    args = ap.parse_args()
    score = load_score(args.eval_dir)
    xs, ys, report = [], [], {}
    for name in args.sets.split(","):
        run = SetRun(args.eval_dir / name, args.work / f"{name}__usem3__tdefault__mdefault", score,
                     load_queries(args.eval_dir / name, None))
        gaps, stage_gaps, answered = [], [], 0
        sx, sy = [], []
        for q, cos, hit in pools(run, args.n):
            sx += list(cos)
            sy += list(hit)
            if hit.any():
                answered += 1
                gaps.append(float(cos.max() - cos[hit].max()))  # how far the best answer sits below the best
                base = run.base(q)[1][:len(cos)]
                s = 0.5 * minmax(base) + 0.5 * minmax(cos)  # the stage's score (retrieval/e5_stage.rerank)
                stage_gaps.append(float(s.max() - s[hit].max()))
        g, sg = np.array(gaps), np.array(stage_gaps)
        report[name] = {"queries": len(run.queries), "answer_in_pool": answered,
                        **{f"gap_p{p}": round(float(np.percentile(g, p)), 4) for p in (50, 80, 90, 95, 99)},
                        **{f"stage_gap_p{p}": round(float(np.percentile(sg, p)), 4) for p in (50, 80, 90, 95, 99)}}
        xs.append(np.array(sx))
        ys.append(np.array(sy, dtype=float))
        print(name, json.dumps(report[name]), flush=True)
    # every set weighs the same in the fit, whatever its number of queries
    w = [len(x) for x in xs]
    reps = [max(1, round(max(w) / n)) for n in w]
    x = np.concatenate([np.tile(a, r) for a, r in zip(xs, reps)])
    y = np.concatenate([np.tile(b, r) for b, r in zip(ys, reps)])
    a, b = logistic(x, y)
    print(f"relevance = 1 / (1 + exp(-({a:.2f} * cosine + {b:.2f})))")
    for name, sx, sy in zip(report, xs, ys):
        p = 1 / (1 + np.exp(-(a * sx + b)))
        bins = [(lo, lo + 0.2) for lo in (0.0, 0.2, 0.4, 0.6, 0.8)]
        cal = [(f"{lo:.1f}-{hi:.1f}", int(((p >= lo) & (p < hi)).sum()),
                round(float(sy[(p >= lo) & (p < hi)].mean()), 3) if ((p >= lo) & (p < hi)).any() else None)
               for lo, hi in bins]
        print(name, "predicted bin, candidates, share relevant:", cal)


if __name__ == "__main__":
    main()
