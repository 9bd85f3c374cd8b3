"""A 10,000-memory note: index it, edit one line under the daemon, and search it next to 10,000 sections.

    python bench/memory_items.py [--memories 10000] [--edits 10] [--queries 40]

The memory note is written in the shape `mdmem add` gives it (front matter, a title, one
`- YYYY-MM-DD: text` line per memory). The sections store holds the same texts as 10,000
headed sections of one document. Edits add a word to one memory, save the note as editors
do (a new file renamed over it; --in-place truncates and rewrites) and poll the daemon's socket
until the new word is found. The debounce is 0 ms unless --debounce-ms is given (the daemon's
default waits 300 ms for a save to settle). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from chaos import save  # noqa: E402
from daemon_bench import TOPICS, percentile, wait_ready  # noqa: E402
from indexer import config  # noqa: E402
from indexer.remote import Client, socket_path  # noqa: E402
from indexer.memory import Memory  # noqa: E402

START = date(2024, 1, 1)


def memory_text(i: int, token: str = "") -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"Memory {i}: the {topic} item {i * 7} was agreed with vendor {i % 97} {token}".rstrip()


def memory_note(n: int, edits: dict[int, str] | None = None) -> str:
    edits = edits or {}
    lines = [f"- {(START + timedelta(days=i // 20)).isoformat()}: {memory_text(i, edits.get(i, ''))}"
             for i in range(n)]
    return "---\ntype: fact\n---\n\n# Facts\n\n" + "\n".join(lines) + "\n"


def section_note(n: int) -> str:
    return "# Notes\n\n" + "".join(f"## Entry {i}\n\n{memory_text(i)}\n\n" for i in range(n))


def build(home: Path, uri: str, text: str) -> dict:
    path = home / uri
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with Memory(cfg=config.load(home=home, env={})) as mem:
        t0 = time.perf_counter()
        mem.index()
        secs = time.perf_counter() - t0
        stats = mem.stats()["global"]
    return {"index_s": round(secs, 2), "memories": stats["memories"], "sections": stats["sections"]}


def search_times(homes: dict[str, Path], queries: list[str], rounds: int = 3) -> dict:
    """Search percentiles per store and mode, the stores taking turns query by query (same load on both)."""
    mems = {name: Memory(cfg=config.load(home=home, env={})) for name, home in homes.items()}
    try:
        times: dict = {(name, mode): [] for name in mems for mode in ("fts", "hybrid")}
        for mem in mems.values():
            mem.search("warm up the model", bump=False)
        for _ in range(rounds):
            for q in queries:
                for mode in ("fts", "hybrid"):
                    for name, mem in mems.items():
                        t0 = time.perf_counter()
                        mem.search(q, mode=mode, bump=False)
                        times[(name, mode)].append(1000 * (time.perf_counter() - t0))
    finally:
        for mem in mems.values():
            mem.close()
    return {f"search_{name}": {mode: {"p50_ms": round(statistics.median(times[(name, mode)]), 1),
                                      "p95_ms": round(percentile(times[(name, mode)], 0.95), 1)}
                               for mode in ("fts", "hybrid")} for name in mems}


def edit_latency(base: Path, home: Path, n: int, edits: int, debounce_ms: int, in_place: bool) -> dict:
    run_dir = base / "run"
    run_dir.mkdir(exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), "PYTHONPATH": str(REPO)}
    os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
    cfg = config.load(home=home, env={})
    sock = socket_path(cfg)
    log = base / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve", "--debounce-ms",
                             str(debounce_ms)],
                            env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=str(REPO))
    path = home / "user" / "fact.md"
    try:
        wait_ready(proc, sock)
        client = Client(sock, timeout=600)
        client.call("search", {"query": "warm up the reader", "limit": 1, "bump": False})  # loads its model
        rng = random.Random(3)
        latencies = []
        for k in range(edits):
            i = rng.randrange(n)
            token = f"zqxedit{k}w{i}"
            save(path, memory_note(n, {i: token}), in_place)
            t_edit = time.perf_counter()
            while time.perf_counter() < t_edit + 60:
                hits = client.call("search", {"query": token, "mode": "fts", "limit": 1, "bump": False})
                if hits and hits[0]["content"].endswith(token):
                    break
                time.sleep(0.005)
            else:
                raise SystemExit(f"edit {k} not searchable within 60 s")
            latencies.append(1000 * (time.perf_counter() - t_edit))
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    return {"edits": edits, "p50_ms": round(statistics.median(latencies), 1),
            "max_ms": round(max(latencies), 1), "each_ms": [round(x) for x in latencies],
            "traceback_in_log": "Traceback" in log.read_text()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--edits-only", action="store_true", help="only index the memory note and time the edits")
    ap.add_argument("--no-edits", action="store_true", help="skip the daemon edits")
    ap.add_argument("--debounce-ms", type=int, default=0, help="the daemon's quiet time per path (default 0 here)")
    ap.add_argument("--in-place", action="store_true", help="save by truncating and rewriting (default: rename)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rng = random.Random(5)
    queries = [f"{rng.choice(TOPICS)} item agreed with vendor {rng.randrange(97)}" for _ in range(args.queries)]
    out: dict = {"memories": args.memories}
    with tempfile.TemporaryDirectory(prefix="mdmem-items-") as tmp:
        base = Path(tmp)
        out["memory_note"] = build(base / "items", "user/fact.md", memory_note(args.memories))
        if not args.edits_only:
            out["section_note"] = build(base / "sections", "notes/entries.md", section_note(args.memories))
            out.update(search_times({"memory_note": base / "items", "section_note": base / "sections"}, queries))
        if args.no_edits:
            print(json.dumps(out, indent=1))
            return
        out["one_line_edit_through_daemon"] = edit_latency(base, base / "items", args.memories, args.edits,
                                                           args.debounce_ms, args.in_place)
        out["one_line_edit_through_daemon"].update(debounce_ms=args.debounce_ms, in_place=args.in_place)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
