"""Fusion sweep: collect both signals' candidates once per query, then score many fusion schemes offline."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval import default_eval_dir, load_queries  # noqa: E402
from indexer.retrieval.collect import collect  # noqa: E402
from indexer.retrieval.query import analyze, make_query  # noqa: E402
from indexer.memory import Memory  # noqa: E402

K = 10


def collect_candidates(home: Path, queries: list[dict], feedback: tuple[int, int]) -> list[dict]:
    """Per query: every candidate the live search would fuse, with raw BM25, cosine and feedback BM25."""
    out = []
    nan = lambda x: np.nan if x is None else x  # noqa: E731
    with Memory(home=home) as mem:
        stores, emb = mem.stores("all"), mem.embedder
        for q in queries:
            query = make_query(mem.cfg, q["query"], mode="hybrid", under=[q["scope"]] if q.get("scope") else [])
            cfg = mem.cfg.with_(feedback_docs=feedback[0], feedback_terms=feedback[1])
            pool = collect(stores, emb, cfg, analyze(query))
            rows = [(c.row["uri"], c.row["start_line"], c.row["end_line"], nan(c.bm25), nan(c.similarity),
                     nan(c.bm25_feedback)) for c in pool.cands.values()]
            out.append({"q": q, "rows": rows})
    return out


def minmax(x):
    ok = ~np.isnan(x)
    if not ok.any():
        return np.zeros_like(x)
    lo, hi = x[ok].min(), x[ok].max()
    return np.where(ok, (x - lo) / (hi - lo) if hi > lo else 1.0, 0.0)


def by_max(x):
    ok = ~np.isnan(x)
    top = x[ok].max() if ok.any() else 0.0
    return np.where(ok, x / top if top > 0 else 0.0, 0.0)


def schemes(weights, feedback_weights):
    """name -> f(bm25, cos, feedback bm25) -> scores (nan = drop)."""
    out = {"fts": lambda b, c, e: np.where(np.isnan(b), np.nan, b), "vector": lambda b, c, e: c}
    for w in weights:
        for f in feedback_weights:
            # the live default: text = (minmax(bm25) + f·minmax(feedback bm25)) / (1 + f)
            out[f"feedback f={f} w={w}"] = lambda b, c, e, w=w, f=f: (
                (1 - w) * (minmax(b) + f * minmax(e)) / (1 + f) + w * minmax(c))
    for w in weights:
        out[f"max+minmax w={w}"] = lambda b, c, e, w=w: (1 - w) * by_max(b) + w * minmax(c)
        out[f"minmax+minmax w={w}"] = lambda b, c, e, w=w: (1 - w) * minmax(b) + w * minmax(c)
        # raw cosine: the vector side nudges rather than spreads over the full [0, 1] range
        out[f"minmax+raw w={w}"] = lambda b, c, e, w=w: (1 - w) * minmax(b) + w * np.nan_to_num(c, nan=0.0)
        # vectors only re-rank what full text found (cosine scaled among those), others drop
        out[f"rerank w={w}"] = lambda b, c, e, w=w: np.where(
            np.isnan(b), np.nan, (1 - w) * by_max(b) + w * minmax(np.where(np.isnan(b), np.nan, c)))
        for n in (10, 20, 30):
            # fuse only within full text's top n: vectors re-order, never add, what BM25 ranked
            out[f"top{n} minmax w={w}"] = lambda b, c, e, w=w, n=n: _top(b, n, (1 - w) * minmax(_top(b, n, b)) + w * minmax(_top(b, n, c)))
    return out


def _top(b, n, x):
    """x where b is among its n best, nan elsewhere."""
    if np.isnan(b).all():
        return np.full_like(b, np.nan)
    cut = np.sort(b[~np.isnan(b)])[::-1][:n][-1]
    return np.where(~np.isnan(b) & (b >= cut), x, np.nan)


def score_set(cands: list[dict], fn, scorer) -> dict:
    ms = []
    for item in cands:
        q, rows = item["q"], item["rows"]
        b = np.array([r[3] for r in rows], dtype=float)
        c = np.array([r[4] for r in rows], dtype=float)
        e = np.array([r[5] for r in rows], dtype=float)
        s = fn(b, c, e) if rows else np.array([])
        order = [i for i in np.argsort(-np.nan_to_num(s, nan=-np.inf), kind="stable") if not np.isnan(s[i])]
        rel = [(scorer.norm_uri(r["uri"]), r["start_line"], r["end_line"]) for r in q["relevant"]]
        ign = [(scorer.norm_uri(r["uri"]), r["start_line"], r["end_line"]) for r in q.get("ignore") or []]
        res = [(rows[i][0], rows[i][1], rows[i][2]) for i in order]
        res = [x for x in res if not scorer.is_ignored(x, rel, ign)][:K]
        ms.append(scorer.score_query(rel, res, K))
    return {m: round(float(np.mean([x[m] for x in ms])), 4) for m in ("R@5", "R@10", "Hit@5", "MRR@10", "nDCG@10")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--sets", default="locomo-dev,rgb-zh-dev,cmrc2018-dev")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work",
                    help="where eval.py built the indexes")
    ap.add_argument("--index", default="usem3__tdefault__mdefault", help="index folder suffix under --work")
    ap.add_argument("--weights", default="0.05,0.1,0.2,0.3,0.4,0.5")
    ap.add_argument("--feedback-weights", default="0,0.1,0.2,0.3,0.5")
    ap.add_argument("--feedback-docs", type=int, default=15, help="top full-text hits the expansion words come from")
    ap.add_argument("--feedback-terms", type=int, default=5, help="expansion words per query")
    ap.add_argument("--max-queries", type=int, default=None)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "sweep.json")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("score", args.eval_dir / "score.py")
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    fns = schemes([float(w) for w in args.weights.split(",")], [float(f) for f in args.feedback_weights.split(",")])
    table = {}
    for name in args.sets.split(","):
        cands = collect_candidates(args.work / f"{name}__{args.index}" / "home", load_queries(args.eval_dir / name, args.max_queries),
                        (args.feedback_docs, args.feedback_terms))
        table[name] = {k: score_set(cands, fn, scorer) for k, fn in fns.items()}
        print(f"\n## {name}\nscheme | R@5 | R@10 | Hit@5 | MRR@10 | nDCG@10")
        for k, v in table[name].items():
            print(f"{k} | " + " | ".join(f"{x:.3f}" for x in v.values()), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
