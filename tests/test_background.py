"""`mdmem start`, `stop`, `restart`: a background daemon without systemd, its pid and log files, and its end."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import urllib.request
from pathlib import Path

import pytest

from cli_process import command, mdmem
from polling import eventually


class Store:
    def __init__(self, base: Path):
        self.home, run = base / "home", base / "run"
        for d in (self.home / "user", run):
            d.mkdir(parents=True)
        (self.home / "user" / "tea.md").write_text("# Tea\n\nThe user brews oolong tea every morning.\n")
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(run)}
        self.base = base

    def cli(self, *args):
        return mdmem("--home", str(self.home), "--embedder", "none", *args, base_env=self.env, cwd=self.base,
                     timeout=180)

    def pid(self) -> int | None:
        try:
            return int((self.home / ".mdmem-serve.pid").read_text())
        except (OSError, ValueError):
            return None

    def daemon(self) -> bool:
        r = self.cli("status", "--json")
        return r.returncode == 0 and json.loads(r.stdout)["stores"]["global"].get("daemon") is True


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a child of nobody here once stopped is reaped by init; a zombie still answers kill 0
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path)
    yield s
    pid = s.pid()
    if pid and not _gone(pid):
        os.kill(pid, signal.SIGKILL)


def test_start_serves_in_the_background_and_stop_ends_it(store):
    r = store.cli("start")
    assert r.returncode == 0, r.stderr
    pid = store.pid()
    assert pid and f"pid {pid}" in r.stdout
    assert store.daemon()
    found = store.cli("search", "oolong", "--mode", "fts", "--json")
    assert json.loads(found.stdout)["results"][0]["uri"] == "user/tea.md"
    status = store.cli("status")
    assert ".mdmem-serve.log" in status.stdout and f"pid {pid}" in status.stdout
    log = store.home / ".mdmem-serve.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and stat.S_IMODE((store.home / ".mdmem-serve.pid").stat().st_mode) == 0o600

    again = store.cli("start")
    assert again.returncode == 0 and "already serves" in again.stdout and store.pid() == pid

    stopped = store.cli("stop")
    assert stopped.returncode == 0 and f"stopped (pid {pid})" in stopped.stdout
    assert eventually(lambda: _gone(pid), timeout=30, every=0.1)
    assert not store.daemon() and store.pid() is None
    assert "no daemon serves" in store.cli("stop").stdout
    assert any(json.loads(line).get("event") for line in log.read_text().splitlines() if line.startswith("{"))


def test_restart_replaces_the_daemon(store):
    assert store.cli("start").returncode == 0
    first = store.pid()
    r = store.cli("restart")
    assert r.returncode == 0, r.stderr
    second = store.pid()
    assert second and second != first and eventually(lambda: _gone(first), timeout=30, every=0.1)
    assert store.daemon()
    assert store.cli("stop").returncode == 0


def test_a_daemon_that_cannot_start_is_reported_with_its_log(store):
    # a second daemon cannot take the store: start waits for it, sees it exit and shows why
    blocker = subprocess.Popen(command("--home", str(store.home), "--embedder", "none",
                                "serve"), env=store.env, cwd=store.base, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        assert eventually(store.daemon, timeout=120, every=0.2)
        r = store.cli("start")
        assert r.returncode == 0 and "already serves" in r.stdout  # the lock's holder is named, nothing started
        (store.home / ".mdmem-serve.pid").write_text("1\n")  # a stale pid file of another process
        r = store.cli("stop")  # stops whoever holds the store's lock, not the pid file's process
        assert r.returncode == 0 and f"pid {blocker.pid}" in r.stdout
        assert blocker.wait(timeout=60) == 0
    finally:
        if blocker.poll() is None:
            blocker.kill()
    bad = store.cli("start", "--http", "10.0.0.1:9")  # refused before anything starts: HTTP is loopback only
    assert bad.returncode == 2 and "loopback" in bad.stderr and store.pid() is None


def test_a_daemon_that_exits_at_start_is_reported_with_its_log(store):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        r = store.cli("start", "--http", f"127.0.0.1:{taken.getsockname()[1]}")
    finally:
        taken.close()
    assert r.returncode == 1 and "exited with status" in r.stderr and ".mdmem-serve.log" in r.stderr
    assert store.pid() is None and not store.daemon()


def test_start_with_http_waits_for_its_port(store):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    r = store.cli("start", "--http", f"127.0.0.1:{port}")
    assert r.returncode == 0, r.stderr
    token = (store.home / ".http-token").read_text().strip()
    ping = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ping/", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(ping, timeout=10) as answer:  # answered at once: start returned only when it did
        assert answer.status == 200
    assert store.cli("stop").returncode == 0
