"""Leave one LoCoMo conversation out: pick the stage's pool and weight on the other four, score the fifth.

    python bench/e5_loo.py [bench/out/e5-stage-kind.json]   # after bench/e5_stage.py ran on locomo-dev
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
METRIC = "R@10"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "bench" / "out" / "e5-stage-kind.json"
    runs = json.loads(path.read_text())["locomo-dev"]
    convs = sorted(g for g in runs["base"] if g.startswith("scope="))
    stages = [v for v in runs if v.startswith(("stage ", "kind "))]
    print(f"{'conversation':28s} {'chosen on the others':22s} base {METRIC} / MRR   held-out {METRIC} / MRR")
    wins = 0
    for held in convs:
        others = [c for c in convs if c != held]
        best = max(stages, key=lambda v: sum(runs[v][c][METRIC] + runs[v][c]["MRR@10"] for c in others))
        b, s = runs["base"][held], runs[best][held]
        wins += s[METRIC] >= b[METRIC] and s["MRR@10"] >= b["MRR@10"]
        print(f"{held:28s} {best:22s} {b[METRIC]:.3f} / {b['MRR@10']:.3f}      {s[METRIC]:.3f} / {s['MRR@10']:.3f}")
    chosen = "kind m0.5 s0.3"  # what mdmem runs: a = 0.5 for memory records, 0.3 for sections
    print(f"\n{chosen} on each conversation (base -> stage), {METRIC} / MRR@10:")
    for c in convs:
        b, s = runs["base"][c], runs[chosen][c]
        print(f"  {c:28s} {b[METRIC]:.3f} -> {s[METRIC]:.3f}   {b['MRR@10']:.3f} -> {s['MRR@10']:.3f}")
    print(f"held-out conversations where the chosen rule did not lose: {wins} of {len(convs)}")


if __name__ == "__main__":
    main()
