"""A small stand-in for the eval sets' score.py (same command line and JSON shape) for checkouts without them."""

import argparse
import json
import math


def overlaps(hit, rel):
    return hit["uri"] == rel["uri"] and hit["start_line"] <= rel["end_line"] and rel["start_line"] <= hit["end_line"]


def score_query(rel, hits):
    covered_at = {}
    for rank, h in enumerate(hits[:10], 1):
        for i, r in enumerate(rel):
            if i not in covered_at and overlaps(h, r):
                covered_at[i] = rank
    first = min(covered_at.values(), default=None)
    gains = sorted(covered_at.values())
    out = {"n": 1, "MRR@10": 1 / first if first else 0.0,
           "nDCG@10": sum(1 / math.log2(r + 1) for r in gains) / sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10))),
           "lines": sum(h["end_line"] - h["start_line"] + 1 for h in hits[:10]) / max(1, len(hits[:10]))}
    for k in (1, 5, 10):
        out[f"R@{k}"] = sum(1 for r in covered_at.values() if r <= k) / len(rel)
        out[f"Hit@{k}"] = 1.0 if first and first <= k else 0.0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("queries")
    ap.add_argument("results")
    ap.add_argument("--json")
    args = ap.parse_args()
    queries = [json.loads(line) for line in open(args.queries, encoding="utf-8") if line.strip()]
    results = {}
    for line in open(args.results, encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            results[d["qid"]] = d["results"]
    per = [score_query(q["relevant"], results.get(q["qid"], [])) for q in queries]
    overall = {k: sum(p[k] for p in per) / len(per) for k in per[0]}
    overall["n"] = len(per)
    json.dump({"queries": len(per), "groups": {"ALL": overall}}, open(args.json, "w"))


if __name__ == "__main__":
    main()
