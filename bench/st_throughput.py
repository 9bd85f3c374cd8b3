"""A sentence-transformers embedder's build throughput and memory through mdmem: texts/s, query ms, peak RSS.

Loads the model the way `mdmem index` does (config -> providers.load_embedder, the model's own prompts), embeds
a fixed list of texts (the first N memory lines of locomo-facts-dev, in file order) in the configured batches
and reports the throughput on every core torch uses, the median query time and the process's peak RSS.

    python bench/st_throughput.py --model DIR [--texts 256] [--device cpu] [--precision bf16]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval import default_eval_dir  # noqa: E402

from indexer import config  # noqa: E402
from indexer.providers import load_embedder  # noqa: E402


def fixed_texts(n: int) -> list[str]:
    corpus = default_eval_dir() / "locomo-facts-dev" / "corpus"
    lines = [ln[2:].strip() for p in sorted(corpus.rglob("*.md"))
             for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("- ")]
    return lines[:n]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path, help="sentence-transformers folder")
    ap.add_argument("--texts", type=int, default=256)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", default="fp32", help="[embedder] precision: fp32 or bf16")
    args = ap.parse_args()
    texts = fixed_texts(args.texts)
    cfg = config.load(home=Path(tempfile.mkdtemp()), env={}, embedder="sentence-transformers", st_model=str(args.model), device=args.device,
                      embedder_precision=args.precision)
    t0 = time.perf_counter()
    emb = load_embedder(cfg, fallback=False)
    emb.embed_documents(texts[:8])  # first call: lazy init outside the timing
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(0, len(texts), cfg.embed_batch):
        emb.embed_documents(texts[i:i + cfg.embed_batch])
    build_s = time.perf_counter() - t0
    took = []
    for q in ("我平时周末一般做什么？", "What does my husband do?", "When did Caroline go to the LGBTQ support group?"):
        for _ in range(5):
            t = time.perf_counter()
            emb.embed_query(q)
            took.append(1000 * (time.perf_counter() - t))
    import torch
    out = {"model_id": emb.model_id, "dim": emb.dim, "device": args.device, "precision": args.precision,
           "torch_threads": torch.get_num_threads(),
           "texts": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
           "batch": cfg.embed_batch, "load_s": round(load_s, 1), "build_s": round(build_s, 1),
           "texts_per_s": round(len(texts) / build_s, 2), "query_ms_median": round(statistics.median(took), 1),
           "peak_rss_mb": round(rss_mb())}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
