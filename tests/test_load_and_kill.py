"""Load and kill: HTTP clients, socket clients, MCP calls and an editor write one space at once through a real
daemon; every request is answered within its deadline, then SIGKILL: every acknowledged memory is in the Markdown
exactly once, no editor save is lost, and a restarted daemon indexes it all (`verify` clean).

The daemon runs the real model, so indexing takes long enough for writes to queue behind each other (what
left callers unanswered); each memory is a different handful of words, so none is a twin of another
(cosine >= add_dedupe_threshold would make it a restatement, not a second line).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli_process import command
from polling import eventually
from racing_editor import EDITOR
from http_daemon import free_port

HTTP_THREADS, HTTP_EACH = 10, 4  # 40 POST /memories, the load that went unanswered before
SOCKET_ADDS, SOCKET_PARALLEL = 12, 4
MCP_ADDS = 4
DEADLINE_S = 60.0  # the longest any request may wait for its answer (the daemon's own deadline is 20 s)
SPACE = "load"
WORDS = ("harbour violin glacier pepper lantern saddle orbit walnut meadow kettle falcon ribbon quarry tulip "
         "anchor biscuit canyon dynamo ember fjord gravel hammock igloo jasmine kayak lagoon marble nectar oyster "
         "parsley quiver radish sapphire thimble umbrella velvet wagon yeast zephyr 苹果 铁路 月亮 书架 茶杯 河流 "
         "钢琴 雨伞 森林 邮票").split()


def memory(rng: random.Random, label: str) -> str:
    return f"{label}: " + " ".join(rng.sample(WORDS, 6))


class Daemon:
    def __init__(self, home: Path, run: Path, port: int | None):
        self.home, self.port = home, port
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(run)}
        self.base = command("--home", str(home))
        http = ["--http", f"127.0.0.1:{port}"] if port else []
        self.proc = subprocess.Popen(self.base + ["serve", *http], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def cli(self, *args, timeout: float = DEADLINE_S):
        return subprocess.run(self.base + list(args), capture_output=True, text=True, env=self.env, timeout=timeout)

    def up(self) -> bool:
        if self.proc.poll() is not None:
            return False
        status = self.cli("status", "--json", timeout=30)
        return status.returncode == 0 and json.loads(status.stdout)["stores"]["global"].get("daemon") is True

    def post(self, path: str, body: dict):
        token = (self.home / ".http-token").read_text().strip()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE_S)
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")
        finally:
            conn.close()


def mcp_adds(port: int, token: str, texts: list[str]) -> tuple[list[str], list[str]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run():
        done, failed = [], []
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    for text in texts:
                        res = await asyncio.wait_for(s.call_tool("memory_add", {"text": text, "space": SPACE}),
                                                     DEADLINE_S)
                        (failed if res.is_error else done).append(text if not res.is_error
                                                                  else f"{text}: {res.content[0].text}")
        return done, failed
    return asyncio.run(run())


@pytest.mark.slow
def test_every_request_is_answered_and_every_acknowledged_write_survives_a_kill(tmp_path):
    home, run = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run.mkdir()
    d = Daemon(home, run, free_port())
    try:
        assert eventually(lambda: (home / ".http-token").exists() and d.up(), timeout=120, every=0.3)
        status, first = d.post("/memories", {"messages": [{"role": "user", "content": "load opening line"}],
                                             "user_id": SPACE})
        assert status == 200, first
        note = next(p for p in home.rglob("*.md") if "load opening line" in p.read_text(encoding="utf-8"))
        stop = tmp_path / "stop"
        editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(stop)], stdout=subprocess.PIPE,
                                  text=True)
        acked, unanswered, lock = ["load opening line"], [], threading.Lock()

        def http_client(t: int) -> None:
            for i in range(HTTP_EACH):
                text = memory(random.Random(f"h{t}.{i}"), f"http {t}.{i}")
                t0 = time.monotonic()
                try:
                    status, body = d.post("/memories", {"messages": [{"role": "user", "content": text}],
                                                        "user_id": SPACE})
                except OSError as exc:  # a timeout is an unanswered request
                    with lock:
                        unanswered.append(f"{text}: {exc!r} after {time.monotonic() - t0:.1f}s")
                    continue
                with lock:
                    if status == 200:
                        acked.append(text)
                    elif status != 503:  # busy is an answer; anything else is a bug
                        unanswered.append(f"{text}: {status} {body}")

        def socket_client(i: int) -> None:
            text = memory(random.Random(f"s{i}"), f"socket {i}")
            try:
                r = d.cli("add", text, "--space", SPACE, "--json")
            except subprocess.TimeoutExpired:
                with lock:
                    unanswered.append(f"{text}: no answer in {DEADLINE_S}s")
                return
            with lock:
                if r.returncode == 0:
                    acked.append(text)
                elif r.returncode != 75:  # EX_TEMPFAIL: the daemon said it was busy
                    unanswered.append(f"{text}: exit {r.returncode} {r.stderr.strip()}")

        def searcher() -> None:
            for _ in range(10):
                r = d.cli("search", "harbour violin", "--space", SPACE, "--limit", "3")
                if r.returncode != 0:
                    with lock:
                        unanswered.append(f"search: exit {r.returncode} {r.stderr.strip()}")

        mcp_texts = [memory(random.Random(f"m{i}"), f"mcp {i}") for i in range(MCP_ADDS)]
        with ThreadPoolExecutor(HTTP_THREADS + SOCKET_PARALLEL + 2) as pool:
            jobs = [pool.submit(http_client, t) for t in range(HTTP_THREADS)]
            jobs += [pool.submit(socket_client, i) for i in range(SOCKET_ADDS)]
            jobs.append(pool.submit(searcher))
            mcp_job = pool.submit(mcp_adds, d.port, (home / ".http-token").read_text().strip(), mcp_texts)
            for job in jobs:
                job.result(timeout=600)
            done, failed = mcp_job.result(timeout=600)
            acked += done
            unanswered += [f for f in failed if "retry" not in f]  # a busy answer is an answer
        d.proc.kill()  # the instant after the last answer: no chance to flush anything
        d.proc.wait(timeout=30)
        stop.touch()
        edits = int(editor.communicate(timeout=60)[0])

        assert not unanswered, unanswered
        assert len(acked) >= HTTP_THREADS * HTTP_EACH // 2, f"too few writes acknowledged: {len(acked)}"
        text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(home.rglob("*.md")))
        twice = [t for t in acked if text.count(t + "\n") + text.endswith(t) != 1]
        assert not twice, f"acknowledged memories not in the notes exactly once: {twice}"
        assert all(f"editor line {n}" in note.read_text() for n in range(edits)), "an editor save was lost"

        d = Daemon(home, run, None)  # a restart finds everything the killed daemon had not indexed
        assert eventually(d.up, timeout=120, every=0.3)
        assert eventually(lambda: json.loads(d.cli("status", "--json").stdout)["stores"]["global"]["pending"] == 0,
                          timeout=120, every=0.3)
        verify = d.cli("verify", "--json", timeout=300)
        assert verify.returncode == 0 and json.loads(verify.stdout)["ok"], verify.stdout
        found = json.loads(d.cli("search", acked[-1], "--space", SPACE, "--mode", "fts", "--json").stdout)
        assert any(acked[-1] in h["content"] for h in found["results"])
    finally:
        if d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
            try:
                d.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                d.proc.kill()
