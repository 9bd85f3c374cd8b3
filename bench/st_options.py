"""A sentence-transformers model's CPU options on a fixed sample: texts/s and each option's cosine to fp32.

    python bench/st_options.py --model DIR [--texts 100] [--only fp32,bf16,...]

The sample: the first N passages of rgb-zh-dev (corpus files in name order, headings left out) as documents and
every zh-memory-dev question as a question, each with the model's own prompt as mdmem sends it. fp32 and bf16
load through mdmem's provider ([embedder] precision); the other rows change one thing of one of them: batch
size, batches in file order (the library sorts the texts of one call by length before batching; these are
not sorted across batches), torch threads, max_seq_length, and torch's dynamic int8 quantisation of every
Linear layer (per tensor, and per output channel). One JSON line per option.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval import default_eval_dir  # noqa: E402

from indexer.embedder import SentenceTransformerEmbedder  # noqa: E402

OPTIONS = ("fp32", "bf16", "bf16-b16", "bf16-b8", "bf16-b16-file-order", "bf16-1-thread", "bf16-max128",
           "int8", "int8-channel")


def sample(n: int) -> tuple[list[str], list[str]]:
    corpus = default_eval_dir() / "rgb-zh-dev" / "corpus"
    passages = [ln.strip() for p in sorted(corpus.rglob("*.md"))
                for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    lines = (default_eval_dir() / "zh-memory-dev" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return passages[:n], [json.loads(x)["query"] for x in lines if x.strip()]


def encode(model, texts: list[str], prompt: str, batch: int, file_order: bool = False) -> np.ndarray:
    calls = [texts[i:i + batch] for i in range(0, len(texts), batch)] if file_order else [texts]
    v = np.concatenate([model.encode(c, batch_size=batch, prompt_name=prompt, convert_to_numpy=True,
                                     show_progress_bar=False) for c in calls]).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)  # in float32, as the provider does: bf16's own norm is off by 1e-3


def int8(model, per_channel: bool):
    import torch
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig
    qconfig = per_channel_dynamic_qconfig if per_channel else default_dynamic_qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear: qconfig}, dtype=torch.qint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="sentence-transformers folder")
    ap.add_argument("--texts", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64, help="mdmem's embed_batch")
    ap.add_argument("--only", default=",".join(OPTIONS), help="comma list of " + ", ".join(OPTIONS))
    args = ap.parse_args()
    import torch
    docs, questions = sample(args.texts)
    threads = torch.get_num_threads()
    fp32 = SentenceTransformerEmbedder(args.model, device="cpu", batch=args.batch)
    bf16 = SentenceTransformerEmbedder(args.model, device="cpu", batch=args.batch, precision="bf16")
    dp, qp = fp32.document_prompt, fp32.query_prompt
    ref_d, ref_q = encode(fp32._model, docs, dp, args.batch), encode(fp32._model, questions, qp, args.batch)
    print(json.dumps({"texts": len(docs), "mean_chars": round(sum(map(len, docs)) / len(docs), 1),
                      "questions": len(questions), "torch_threads": threads}), flush=True)
    for option in args.only.split(","):
        model = (fp32 if option == "fp32" or option.startswith("int8") else bf16)._model
        batch = {"bf16-b16": 16, "bf16-b8": 8, "bf16-b16-file-order": 16}.get(option, args.batch)
        if option.startswith("int8"):
            model = int8(model, option == "int8-channel")
        keep = model.max_seq_length
        model.max_seq_length = 128 if option == "bf16-max128" else keep
        torch.set_num_threads(1 if option == "bf16-1-thread" else threads)
        encode(model, docs[:4], dp, batch)  # first call outside the timing
        t0 = time.perf_counter()
        d = encode(model, docs, dp, batch, file_order=option.endswith("file-order"))
        secs = time.perf_counter() - t0
        q = encode(model, questions, qp, batch)
        model.max_seq_length = keep
        cos_d, cos_q = (d * ref_d).sum(1), (q * ref_q).sum(1)
        print(json.dumps({"option": option, "batch": batch, "texts_per_s": round(len(docs) / secs, 2),
                          "cos_docs_min": round(float(cos_d.min()), 4), "cos_docs_mean": round(float(cos_d.mean()), 4),
                          "cos_questions_min": round(float(cos_q.min()), 4)}), flush=True)
    torch.set_num_threads(threads)


if __name__ == "__main__":
    main()
