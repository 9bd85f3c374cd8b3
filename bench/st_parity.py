"""Loopback parity: vectors a store got through the openai provider against the in-process sentence-transformers embedder.

    python bench/st_server.py --model DIR --name embeddinggemma-300m --port 8765 &
    python bench/st_parity.py --model DIR --work bench/out/eg-eval --sets zh-memory-dev,locomo-dev [--n 40]

--work holds stores that bench/eval.py built with `--embedders openai` against that server. For a sample of
each store's chunks it compares the stored vector with the one the in-process embedder makes of the same text,
and for a sample of the set's questions the provider's question vector with the in-process one. Equal vectors
give equal scores on every question: no set has to be rebuilt in-process to show it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from indexer.config import Config  # noqa: E402
from indexer.index import db  # noqa: E402
from indexer.notes.memory_items import text_to_embed  # noqa: E402
from indexer.providers import load_embedder  # noqa: E402
from eval import default_eval_dir  # noqa: E402


def sample_chunks(index_db: Path, n: int) -> list[tuple]:
    con = db.connect(index_db, readonly=True)
    try:
        rows = con.execute("SELECT c.content, c.kind, c.section, v.embedding FROM chunks c "
                           "JOIN chunks_vec v ON v.id = c.id ORDER BY c.id").fetchall()
    finally:
        con.close()
    return random.Random(7).sample(rows, min(n, len(rows)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the sentence-transformers folder the server serves")
    ap.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    ap.add_argument("--name", default="embeddinggemma-300m", help="the model name the server answers to")
    ap.add_argument("--work", type=Path, required=True, help="bench/eval.py's --work of the openai stores")
    ap.add_argument("--sets", default="zh-memory-dev,locomo-facts-dev,locomo-dev")
    ap.add_argument("--n", type=int, default=40, help="chunks and questions sampled per set")
    ap.add_argument("--precision", default="fp32", help="the in-process embedder's (the server's --precision)")
    args = ap.parse_args()
    local = load_embedder(Config(embedder="sentence-transformers", st_model=args.model, device="cpu",
                                 embedder_precision=args.precision), fallback=False)
    remote = load_embedder(Config(embedder="openai", embedder_model=args.name, embedder_base_url=args.base_url,
                                  embedder_timeout_s=900.0), fallback=False)
    for name in args.sets.split(","):
        rows = sample_chunks(args.work / f"{name}__openai__tdefault__mdefault" / "home" / "index.db", args.n)
        stored = np.array([np.frombuffer(r[3], dtype=np.float32) for r in rows])
        made = local.embed_documents([text_to_embed(r[0], r[1], r[2]) for r in rows])
        lines = (default_eval_dir() / name / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        questions = random.Random(7).sample([json.loads(x)["query"] for x in lines if x.strip()], min(args.n, len(lines)))
        asked = np.array([remote.embed_query(q) for q in questions])
        here = np.array([local.embed_query(q) for q in questions])
        print(f"{name}: {len(rows)} chunks, max |stored - in-process| {np.abs(stored - made).max():.1e}; "
              f"{len(questions)} questions, max |provider - in-process| {np.abs(asked - here).max():.1e}", flush=True)


if __name__ == "__main__":
    main()
