"""A strong embedder as the ranking stage over its own candidates, scored on the dev sets without a second model run.

    python bench/strong_stage.py --work bench/out/eg-eval --sets locomo-dev,locomo-facts-dev \
        --set embedder_base_url=http://127.0.0.1:8765/v1 --set embedder_model=embeddinggemma-300m \
        [--weights 0,0.3,0.5,1] [--set KEY=VALUE ...]

`[ranker] provider = "embedder"` with the embedder's own model scores a hit by the cosine the store's vector
already gives it (bench/st_parity.py: the same vectors), so the stage is retrieval/ranker_stage.blend of the
search's top 30 with each hit's own cosine: this runs each set's questions once (`search --batch --explain
--limit 30` over the stores bench/eval.py built with `--embedders openai`) and blends them per weight with
that function. Weight 0 is the search as it stands.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from indexer.models import Hit  # noqa: E402
from indexer.notes.textseg import mostly_han  # noqa: E402
from indexer.retrieval.ranker_stage import blend  # noqa: E402
from indexer.retrieval.ranking_stage import STAGE_POOL  # noqa: E402
from eval import ASKED_ON, LIMIT, cli_env, default_eval_dir, load_queries, mdmem, parse_overrides  # noqa: E402

KEYS = {f.name for f in fields(Hit)} - {"signals", "explain"}


def hits_of(line: dict) -> list[Hit]:
    return [Hit(**{k: v for k, v in d.items() if k in KEYS}, signals=d.get("explain") or {}) for d in line["results"]]


def score(set_dir: Path, results: Path, out: Path) -> str:
    subprocess.run([sys.executable, str(set_dir.parent / "score.py"), str(set_dir / "queries.jsonl"), str(results),
                    "--json", str(out)], check=True, capture_output=True)
    g = json.loads(out.read_text())["groups"]["ALL"]
    row = f"Hit@1 {g['Hit@1']:.3f}  R@10 {g['R@10']:.3f}  MRR@10 {g['MRR@10']:.3f}  nDCG@10 {g['nDCG@10']:.3f}"
    if set_dir.name.startswith("locomo-facts"):
        r = subprocess.run([sys.executable, str(set_dir.parent / "budget_score.py"), str(set_dir / "queries.jsonl"),
                            str(results), str(set_dir / "corpus")], check=True, capture_output=True, text=True)
        row += f"  within 1,500 chars {r.stdout.split()[4]}"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sets", default="zh-memory-dev,locomo-facts-dev,locomo-dev")
    ap.add_argument("--weights", default="0,0.3,0.5,1")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE")
    args = ap.parse_args()
    env = cli_env({**parse_overrides(args.set), "MDMEM_EMBEDDER": "openai"})
    for name in args.sets.split(","):
        set_dir, work = default_eval_dir() / name, args.work / f"{name}__openai__tdefault__mdefault"
        out = work / "runs" / "stage"
        out.mkdir(parents=True, exist_ok=True)
        queries = {q["qid"]: q for q in load_queries(set_dir, None)}
        batch = out / "batch.jsonl"
        batch.write_text("".join(json.dumps({"qid": q["qid"], "query": q["query"], "now": q.get("now", ASKED_ON),
                                             **({"under": q["scope"]} if q.get("scope") else {})},
                                            ensure_ascii=False) + "\n" for q in queries.values()), encoding="utf-8")
        with (out / "raw.jsonl").open("w", encoding="utf-8") as fo:
            mdmem(work / "home", ["search", "--batch", str(batch), "--json", "--explain", "--limit", str(STAGE_POOL),
                                  "--mode", "hybrid"], env, stdout=fo)
        lines = [json.loads(x) for x in (out / "raw.jsonl").read_text(encoding="utf-8").splitlines() if x.startswith("{")]
        for w in (float(x) for x in args.weights.split(",")):
            results = out / f"results-w{w}.jsonl"
            with results.open("w", encoding="utf-8") as fo:
                for line in lines:
                    hits = hits_of(line)
                    if w and len(hits) > 1:
                        cos = np.array([h.signals.get("cosine") or 0.0 for h in hits])
                        hits = blend(hits, cos, mostly_han(queries[line["qid"]]["query"]), w)
                    fo.write(json.dumps({"qid": line["qid"], "results": [
                        {"uri": h.uri, "start_line": h.start_line, "end_line": h.end_line} for h in hits[:LIMIT]]}) + "\n")
            print(f"{name}  stage weight {w}:  {score(set_dir, results, out / f'score-w{w}.json')}", flush=True)


if __name__ == "__main__":
    main()
