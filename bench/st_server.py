"""A minimal OpenAI-compatible /v1/embeddings server on loopback over a sentence-transformers folder.

mdmem's openai provider adds a known model's own query and document prompts itself (remote.KNOWN_PROMPTS: an
OpenAI-compatible server sends text as given), so this server encodes the text as it arrives, with no prompt
of its own: serve EmbeddingGemma under a name starting with "embeddinggemma" and mdmem's vectors through it
are the ones the in-process sentence-transformers embedder makes with the model's prompts.

    python bench/st_server.py --model DIR [--port 8765] [--name embeddinggemma-300m] [--device cpu] [--precision bf16]
    MDMEM_EMBEDDER=openai MDMEM_EMBEDDER_BASE_URL=http://127.0.0.1:8765/v1 \
        MDMEM_EMBEDDER_MODEL=embeddinggemma-300m mdmem index
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

CACHE_TEXTS = 200_000  # about 600 MB of 768-d float32 at most


def make_server(model, name: str, port: int = 0, batch: int = 64) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) on 127.0.0.1:port answering POST /v1/embeddings with `model`'s vectors."""
    lock = threading.Lock()  # one encode at a time: torch on CPU already uses every core
    # the same text is encoded once: a fusion experiment re-asks every question of a set (631 on
    # locomo-facts-dev), and on two busy cores each question waited behind a build's batch
    seen: dict = {}

    def _known(texts):
        try:
            return np.stack([seen[t] for t in texts])
        except KeyError:
            return None

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, out: dict) -> None:
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                return self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self):
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                texts = body["input"]
                texts = [texts] if isinstance(texts, str) else list(texts)
                if not all(isinstance(t, str) for t in texts):
                    raise ValueError("input must be a string or a list of strings")
            except (ValueError, KeyError, TypeError) as exc:
                return self._send(400, {"error": {"message": f"bad request: {exc}"}})
            vecs = _known(texts)  # a question asked before does not wait behind a build's batch
            if vecs is None:
                with lock:
                    todo = list(dict.fromkeys(t for t in texts if t not in seen))
                    if todo:
                        made = model.encode(todo, batch_size=batch, convert_to_numpy=True, normalize_embeddings=True)
                        if len(seen) + len(todo) > CACHE_TEXTS:
                            seen.clear()
                        seen.update(zip(todo, made))
                    vecs = np.stack([seen[t] for t in texts])
            tokens = sum(len(model.tokenizer(t)["input_ids"]) for t in texts)
            dims = int(body.get("dimensions") or 0)
            if dims and dims < vecs.shape[1]:
                vecs = vecs[:, :dims]  # Matryoshka cut; the client normalises again
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
            self._send(200, {"object": "list", "model": name, "data": data,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path, help="sentence-transformers folder")
    ap.add_argument("--name", default=None, help="model name the server answers to (default: the folder's name)")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)  # the in-process embedder's batch
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="bf16: the weights and activations in bfloat16, as [embedder] precision = \"bf16\"")
    args = ap.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    kwargs = {"dtype": torch.bfloat16} if args.precision == "bf16" else {}
    model = SentenceTransformer(str(args.model), device=args.device, model_kwargs=kwargs)
    name = args.name or args.model.name
    httpd = make_server(model, name, args.port, args.batch)
    print(f"serving {name} ({model.get_sentence_embedding_dimension()}-d) on "
          f"http://127.0.0.1:{httpd.server_address[1]}/v1", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
