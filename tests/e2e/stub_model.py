"""An OpenAI-compatible model on loopback that answers every chat with a fixed line and records each request body.

It is the thing observed by the end-to-end tests (what prompt reached the model), not the thing tested.
Run: python stub_model.py PORT RECORD_FILE   (one JSON request body per line is appended to RECORD_FILE)
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "I will remember that."


class Handler(BaseHTTPRequestHandler):
    record_path = "prompts.jsonl"
    lock = threading.Lock()

    def log_message(self, *_args):  # quiet: the test reads the record, not the log
        pass

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self._json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model",
                                                                 "owned_by": "stub"}]})
        return self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.lock, open(self.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "body": body}, ensure_ascii=False) + "\n")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        created = int(time.time())
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for delta, finish in (({"role": "assistant", "content": REPLY}, None), ({}, "stop")):
                chunk = {"id": "stub-1", "object": "chat.completion.chunk", "created": created,
                         "model": body.get("model", "stub-model"),
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            return
        return self._json(200, {"id": "stub-1", "object": "chat.completion", "created": created,
                                "model": body.get("model", "stub-model"),
                                "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                             "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def main() -> int:
    port, Handler.record_path = int(sys.argv[1]), sys.argv[2]
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
