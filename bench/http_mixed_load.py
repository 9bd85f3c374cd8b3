"""Sustained mixed writes and searches through `mdmem serve --http`: throughput and answer times under load.

    HF_HUB_OFFLINE=1 python bench/http_mixed_load.py --threads 10 --seconds 60 --write-share 0.3

Starts a daemon with the real model on a temporary global store seeded with --seed-memories
memories, then THREADS clients each loop for SECONDS: a POST /memories (one new message) with
probability WRITE_SHARE, else a POST /search, in a few user spaces. Every request has a 60 s client
deadline; an unanswered one is counted, never retried. Prints one JSON object (and a Markdown table
with --markdown): requests per second, p50 / p95 / p99 / max answer time per kind, status counts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS = ("harbour violin glacier pepper lantern saddle orbit walnut meadow kettle falcon ribbon quarry tulip anchor "
         "biscuit canyon dynamo ember fjord gravel hammock igloo jasmine kayak lagoon marble nectar oyster parsley "
         "苹果 铁路 月亮 书架 茶杯 河流 钢琴 雨伞 森林 邮票").split()
DEADLINE_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port: int, token: str, path: str, body: dict) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE_S)
    try:
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def start_daemon(home: Path, run: Path) -> tuple[subprocess.Popen, int]:
    """`mdmem serve --http` on home (made if missing) on a free loopback port, its output dropped: (process, port)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(run)}
    port = free_port()
    return subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "--create", "serve", "--http",
                             f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL), port


def stop_daemon(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--write-share", type=float, default=0.3)
    ap.add_argument("--seed-memories", type=int, default=500)
    ap.add_argument("--spaces", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    base = Path(tempfile.mkdtemp(prefix="mdmem-http-load-"))
    home, run = base / "home", base / "run"
    run.mkdir()
    rng = random.Random(11)
    for s in range(args.spaces):  # seed each space's note directly: the bench measures the daemon, not imports
        note = home / "spaces" / f"user{s}" / "user" / "fact.md"
        note.parent.mkdir(parents=True)
        lines = [f"- 2026-01-{1 + i % 28:02d}: " + " ".join(rng.sample(WORDS, 8))
                 for i in range(args.seed_memories // args.spaces)]
        note.write_text("---\ntype: fact\n---\n\n# Facts\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    t0 = time.perf_counter()
    proc, port = start_daemon(home, run)
    try:
        token = None
        while time.perf_counter() - t0 < 180:
            if (home / ".http-token").exists():
                token = (home / ".http-token").read_text().strip()
                try:
                    if post(port, token, "/search", {"query": "kettle", "user_id": "user0"}) == 200:
                        break
                except OSError:
                    pass
            time.sleep(0.2)
        ready_s = time.perf_counter() - t0
        times: dict[str, list[float]] = {"write": [], "search": []}
        statuses: dict[str, int] = {}
        lock = threading.Lock()
        stop_at = time.perf_counter() + args.seconds

        def client(n: int) -> None:
            r = random.Random(n)
            i = 0
            while time.perf_counter() < stop_at:
                space = f"user{r.randrange(args.spaces)}"
                kind = "write" if r.random() < args.write_share else "search"
                body = ({"messages": [{"role": "user", "content": f"c{n}.{i} " + " ".join(r.sample(WORDS, 7))}],
                         "user_id": space} if kind == "write"
                        else {"query": " ".join(r.sample(WORDS, 2)), "user_id": space, "top_k": 5})
                t = time.perf_counter()
                try:
                    status = str(post(port, token, "/memories" if kind == "write" else "/search", body))
                except OSError as exc:
                    status = type(exc).__name__
                took = time.perf_counter() - t
                with lock:
                    statuses[f"{kind} {status}"] = statuses.get(f"{kind} {status}", 0) + 1
                    times[kind].append(took)
                i += 1

        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.threads)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(args.seconds + DEADLINE_S + 30)
        elapsed = time.perf_counter() - start
    finally:
        stop_daemon(proc)
    out = {"threads": args.threads, "seconds": round(elapsed, 1), "write_share": args.write_share,
           "seed_memories": args.seed_memories, "ready_s": round(ready_s, 1), "statuses": statuses,
           "requests_per_s": round(sum(len(v) for v in times.values()) / elapsed, 1)}
    for kind, values in times.items():
        out[kind] = {"n": len(values), "per_s": round(len(values) / elapsed, 1),
                     **{k: round(pct(values, q) * 1000) for k, q in (("p50_ms", .5), ("p95_ms", .95),
                                                                   ("p99_ms", .99), ("max_ms", 1.0))}}
    print(json.dumps(out, ensure_ascii=False))
    if args.markdown:
        print("\n| kind | requests | per second | p50 / p95 / p99 / max (ms) |\n|---|---|---|---|")
        for kind in ("write", "search"):
            k = out[kind]
            print(f"| {kind} | {k['n']} | {k['per_s']} | {k['p50_ms']} / {k['p95_ms']} / {k['p99_ms']} / {k['max_ms']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
