"""Chinese memory check: memories written with `add`, asked back in paraphrase (Chinese and cross-lingual)
through `recall`; reports how often the memory is inside the block and how often it comes first.

    python bench/zh_memories.py [--json out.json]
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
from indexer.memories.add import normalise  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "zh_memories.jsonl"


def load_cases(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(home: Path, embedder=None, cases: list[dict] | None = None, **settings) -> dict:
    """Add every memory once, recall every question; the rates overall and per language pair."""
    cases = cases or load_cases()
    mem = Memory(cfg=config.load(home=home, env={}, **settings), embedder=embedder)
    try:
        for text in dict.fromkeys(c["memory"] for c in cases):
            mem.add(text, type="fact")
        rows = []
        for c in cases:
            block = mem.recall(c["query"])
            found = [normalise(m["text"]) for m in block["memories"]]
            want = normalise(c["memory"])
            rows.append({**c, "inside": want in found, "first": bool(found) and found[0] == want,
                         "tier": block["tier"], "strength": block.get("strength")})
    finally:
        mem.close()
    summary = {"memories": len({c["memory"] for c in cases}), "questions": len(rows)}
    for lang in sorted({r["lang"] for r in rows}) + ["all"]:
        part = [r for r in rows if lang in ("all", r["lang"])]
        summary[lang] = {"n": len(part), "inside": round(sum(r["inside"] for r in part) / len(part), 3),
                         "first": round(sum(r["first"] for r in part) / len(part), 3)}
    return {"summary": summary, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", type=Path, help="write the per-question rows here")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting, e.g. vector_weight_han=0.3")
    args = ap.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    with tempfile.TemporaryDirectory() as tmp:
        out = run(Path(tmp) / "home", **settings)
    for r in out["rows"]:
        if not r["first"]:
            print(f"{'inside' if r['inside'] else 'MISSED':>6}  [{r['tier']}] {r['query']}  ->  {r['memory']}")
    print(json.dumps(out["summary"], ensure_ascii=False, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
