"""A real `mdmem serve` on a temporary home and project for daemon tests (`Served`), and the checks they share."""

import os
import signal
import subprocess
import time
from pathlib import Path

from cli_process import command
import polling

from indexer import config
from indexer.index import db
from indexer.index import sql
from indexer.remote import Client, socket_path
from indexer.notes.scanner import NoteFilter

DEADLINE = 10.0  # the issue asks for 2 s; CI machines are shared, so allow more and measure in bench/


def env_for(run_dir: Path) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(run_dir)}


class Served:
    """A running `mdmem serve` on a temp home and project, plus helpers to query it."""

    def __init__(self, base: Path, project: bool = True, args: tuple[str, ...] = ()):
        """project: serve a project beside the global store; args: more options before every command."""
        self.base = base
        self.home = base / "home"
        self.project = base / "proj"
        self.notes = self.project / ".mdmem"
        self.run_dir = base / "run"
        for d in (self.home / "user", self.notes, self.run_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.args = ["--home", str(self.home), *(["--project", str(self.project)] if project else []), *args]
        self.with_project = project
        self.env = env_for(self.run_dir)
        self.proc = None
        self.log = base / "serve.log"

    def cfg(self):
        return config.load(home=self.home, project=self.project if self.with_project else None, env={})

    def socket(self) -> Path:
        old = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = str(self.run_dir)
        try:
            return socket_path(self.cfg())
        finally:
            if old is None:
                os.environ.pop("XDG_RUNTIME_DIR")
            else:
                os.environ["XDG_RUNTIME_DIR"] = old

    def cli(self, *args, input=None, cwd=None):
        return subprocess.run(command(*self.args, *args), capture_output=True, text=True,
                              env=self.env, input=input, timeout=300, cwd=cwd)

    def start(self, *serve_args, cwd=None):
        """`mdmem serve` (serve_args: options before it, for the daemon alone), ready once every store it serves
        has synced."""
        self.proc = subprocess.Popen(command(*self.args, *serve_args, "serve"), env=self.env, cwd=cwd,
                                     stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            status = self.call("status") if self.socket().exists() else {}
            # a killed daemon leaves its socket behind: only answers from this process count
            if status and all(v["pid"] == self.proc.pid and v["last_sync"] and not v["busy"] for v in status.values()):
                return
            time.sleep(0.1)
        raise AssertionError("daemon did not become ready:\n" + self.log.read_text())

    def call(self, method, **params):
        try:
            c = Client(self.socket(), timeout=60)
        except OSError:
            return {}
        try:
            return c.call(method, params)
        finally:
            c.close()

    def uris(self, text) -> set[str]:
        return {h["uri"] for h in self.call("search", query=text, mode="fts", limit=50, bump=False)}

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            return self.proc.wait(timeout=60)
        return self.proc.returncode if self.proc else None


def eventually(pred, timeout=DEADLINE):
    return polling.eventually(pred, timeout)


def index_equals_notes(root: Path) -> bool:
    """Every note is indexed with its current size and mtime, and nothing else is."""
    con = db.connect(root / "index.db", readonly=True)
    try:
        docs = sql.all_documents(con)
    finally:
        con.close()
    on_disk = {uri: p.stat() for uri, p in NoteFilter(root).walk()}
    return set(docs) == set(on_disk) and all(
        docs[u]["size"] == s.st_size and docs[u]["mtime_ns"] == s.st_mtime_ns for u, s in on_disk.items())


def found_not(d: Served, new: str, old: str | None, uri: str | None = None) -> bool:
    hits = d.uris(new)
    if uri is not None and uri not in hits or not hits:
        return False
    return not (old and d.uris(old))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
