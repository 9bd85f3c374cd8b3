"""The recording stub model, plus one trick: a user line `CALL name {json}` makes it call that tool once.

OpenClaw lists plugin tools as deferred and calls them through its `tool_call` wrapper, so the stub asks for
`tool_call` with `{"id": name, "args": {...}}`; the turn's next request carries the tool's result (recorded like
every request, where the test reads it) and gets the usual fixed reply.
Run: python tool_stub.py PORT RECORD_FILE
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import stub_model  # noqa: E402  (the shared stub: recording and plain replies)

CALL = re.compile(r"CALL (\w+) (\{.*\})", re.S)
# a recalled old CALL line is not a request: the daemon's block (its header, then one "- " line per memory)
RECALLED = re.compile(r"Relevant long-term memory[^\n]*:\n(?:- [^\n]*(?:\n|$))+")
INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"  # OpenClaw's own context, sent as a user message after the user's


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _call_at(messages: list) -> tuple[int, re.Match | None]:
    """The index of the user's latest message, and the CALL it makes (None: it makes none)."""
    said = [i for i, m in enumerate(messages)
            if m.get("role") == "user" and not _text(m.get("content")).lstrip().startswith(INTERNAL)]
    if not said:
        return -1, None
    return said[-1], CALL.search(RECALLED.sub("", _text(messages[said[-1]].get("content"))))


class ToolHandler(stub_model.Handler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        messages = body.get("messages") or []
        at, call = _call_at(messages)
        later = messages[at + 1:] if call else []
        tool_result = next((m for m in later if m.get("role") == "tool"), None)
        if call and tool_result is None:
            return self._tool_call(body, call.group(1), json.loads(call.group(2)))
        self.rfile = io.BytesIO(raw)  # the shared stub reads the body again and answers as usual
        return super().do_POST()

    def _record(self, body: dict) -> None:
        with self.lock, open(self.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "body": body}, ensure_ascii=False) + "\n")

    def _tool_call(self, body: dict, name: str, args: dict) -> None:
        call = {"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "tool_call", "arguments": json.dumps({"id": name, "args": args})}}
        self._answer(body, {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    def _answer(self, body: dict, message: dict, finish: str) -> None:
        self._record(body)
        base = {"id": "stub-2", "created": int(time.time()), "model": body.get("model", "stub-model")}
        if not body.get("stream"):
            return self._json(200, {**base, "object": "chat.completion",
                                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, end in ((message, None), ({}, finish)):
            chunk = {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": end}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main() -> int:
    port, ToolHandler.record_path = int(sys.argv[1]), sys.argv[2]
    ThreadingHTTPServer(("127.0.0.1", port), ToolHandler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
