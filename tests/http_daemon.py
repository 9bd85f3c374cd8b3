"""A real `mdmem serve --http` on 127.0.0.1 for HTTP tests: started in a temporary store, stopped with SIGTERM."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
from pathlib import Path

from cli_process import command
from polling import eventually


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(base: Path, *extra: str):
    """The daemon over an empty global store under base, until the block ends (then it must exit 0); extra: more
    `serve` options."""
    home, run = base / "home", base / "run"
    run.mkdir()
    home.mkdir(exist_ok=True)  # a store made beforehand (`mdmem init`) is served as it is
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(run)}
    log = base / "serve.log"  # a file, not a pipe: a pipe nobody reads fills up and stops the daemon mid-write
    with open(log, "wb") as out:
        proc = subprocess.Popen(command("--home", str(home), "serve", "--http",
                                 f"127.0.0.1:{port}", *extra), env=env, stdout=out, stderr=subprocess.STDOUT)
    srv = Server(home, port, proc, env)
    try:
        assert eventually(srv.up, timeout=120, every=0.2), log.read_text(errors="replace")[-2000:]
        yield srv
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text(errors="replace")[-2000:]


class Server:
    def __init__(self, home: Path, port: int, proc, env: dict):
        self.home, self.port, self.proc, self.env = home, port, proc, env

    @property
    def token(self) -> str:
        return (self.home / ".http-token").read_text().strip()

    def up(self) -> bool:
        if self.proc.poll() is not None or not (self.home / ".http-token").exists():
            return False
        try:
            return self.call("GET", "/memories")[0] == 200
        except OSError:
            return False

    def call(self, method: str, path: str, body=None, headers=None, token: str | None = "default"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        hdrs = {"Content-Type": "application/json"}
        if token:
            hdrs["Authorization"] = f"Bearer {self.token if token == 'default' else token}"
        hdrs.update(headers or {})
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        assert b"Traceback" not in raw
        return resp.status, json.loads(raw) if raw else None
