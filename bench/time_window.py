"""Time words check: 42 dated memories (half Chinese), 40 questions naming a time (上周, last Friday, 去年三月);
reports how often the right memory comes first in recall, per language, for each time_window setting.

    python bench/time_window.py [--modes filter,rank,off] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer import config  # noqa: E402
from indexer.memory import Memory  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "time_window"


def load_questions(path: Path = DATA / "questions.jsonl") -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _lang(text: str) -> str:
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


def run(home: Path, embedder=None, questions: list[dict] | None = None, **settings) -> dict:
    """Index the dated notes into home, recall every question at its `now`; right-first rates and the rows."""
    questions = questions or load_questions()
    shutil.copytree(DATA / "journal", home / "journal", dirs_exist_ok=True)
    mem = Memory(cfg=config.load(home=home, env={}, **settings), embedder=embedder)
    try:
        mem.index()
        rows = []
        for q in questions:
            block = mem.recall(q["query"], now=q["now"])
            texts = [m["text"] for m in block["memories"]]
            rows.append({**q, "first": bool(texts) and q["expect"] in texts[0],
                         "inside": any(q["expect"] in t for t in texts), "top": texts[:1],
                         "window": block.get("window")})
    finally:
        mem.close()
    summary = {}
    for lang in ("zh", "en", "all"):
        part = [r for r in rows if lang in ("all", _lang(r["query"]))]
        summary[lang] = {"n": len(part), "first": round(sum(r["first"] for r in part) / len(part), 3),
                         "inside": round(sum(r["inside"] for r in part) / len(part), 3)}
    return {"summary": summary, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="filter,rank,off", help="time_window settings to compare")
    ap.add_argument("--json", help="write every row here")
    args = ap.parse_args()
    out = {}
    for mode in args.modes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out[mode] = run(Path(tmp) / "home", time_window=mode)
        s = out[mode]["summary"]
        print(f"{mode:7} right first: all {s['all']['first']:.3f} (n={s['all']['n']}), zh {s['zh']['first']:.3f}, "
              f"en {s['en']['first']:.3f}; in the block: {s['all']['inside']:.3f}")
        for r in out[mode]["rows"]:
            if not r["first"]:
                print(f"    miss {r['qid']} {r['query']!r} -> {r['top']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
