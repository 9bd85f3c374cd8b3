"""Long questions: what they cost, whether a short search waits behind one, and the daemon's memory after them.

    python bench/long_questions.py [--long 20] [--chars 100000] [--sizes 100,2000,10000]

On a copy of memory_samples/home: (1) in this process, one search per question size, Chinese and English
(wall and CPU seconds); (2) through `mdmem serve`'s socket, short searches alone, then short searches on a
second connection while long questions run one after another on the first, and the daemon's RSS before and
after `--long` long questions. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ZH = "我们上周讨论了数据库备份的计划，还有家里人的生日安排和旅行。"
EN = "we talked about the database backup plan and the family trip last week "
SHORT = ["备份", "coffee", "数据库", "backup plan", "咖啡"]


def question(lang: str, chars: int) -> str:
    unit = ZH if lang == "zh" else EN
    return (unit * (chars // len(unit) + 1))[:chars]


def in_process(home: Path, sizes: list[int]) -> dict:
    from indexer import config
    from indexer.memory import Memory
    out = {}
    with Memory(cfg=config.load(home=home, env={})) as mem:
        mem.index()
        mem.search("warm up 备份")
        for lang in ("zh", "en"):
            for n in sizes:
                wall, cpu = time.perf_counter(), time.process_time()
                mem.search(question(lang, n))
                out[f"{lang}_{n}"] = {"wall_s": round(time.perf_counter() - wall, 3),
                                      "cpu_s": round(time.process_time() - cpu, 3)}
    return out


def rss_mb(pid: int) -> dict:
    """The process's resident MB: all, anonymous (heap) and file-backed (mapped model weights, index pages)."""
    kb = {line.split(":")[0]: int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
          if line.startswith(("VmRSS:", "RssAnon:", "RssFile:"))}
    return {k: round(kb[name] / 1024, 1) for k, name in (("all", "VmRSS"), ("anon", "RssAnon"), ("file", "RssFile"))}


def through_daemon(home: Path, long_n: int, chars: int) -> dict:
    from indexer import config
    from indexer.remote import Client, socket_path
    run = home.parent / "run"
    run.mkdir()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "HF_HUB_OFFLINE": "1"}
    os.environ["XDG_RUNTIME_DIR"] = str(run)
    sock = socket_path(config.load(home=home, env=env))
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve"], env=env,
                            stdout=open(home.parent / "serve.log", "wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        short = Client(sock, timeout=600)

        def short_search() -> float:
            t = time.perf_counter()
            short.call("search", {"query": SHORT[int(t * 1000) % len(SHORT)], "limit": 5})
            return time.perf_counter() - t

        for _ in range(5):
            short_search()  # warm: models loaded, pages read
        alone = [short_search() for _ in range(20)]
        # two callers at once lend a second reader (its own connections and caches) before the baseline is read
        other = Client(sock, timeout=600)
        side = threading.Thread(target=lambda: [other.call("search", {"query": q, "limit": 5}) for q in SHORT * 8])
        side.start()
        while side.is_alive():
            short_search()
        other.close()
        rss_before = rss_mb(proc.pid)
        long_times: list[float] = []
        busy = threading.Event()

        def long_loop() -> None:
            c = Client(sock, timeout=600)
            for i in range(long_n):
                t = time.perf_counter()
                busy.set()
                c.call("search", {"query": question("zh" if i % 2 == 0 else "en", chars), "limit": 5})
                long_times.append(time.perf_counter() - t)
            c.close()

        worker = threading.Thread(target=long_loop)
        worker.start()
        busy.wait()
        during = []
        while worker.is_alive():
            during.append(short_search())
        worker.join()
        time.sleep(1)
        return {"short_alone_p50_ms": round(statistics.median(alone) * 1000, 1),
                "short_alone_max_ms": round(max(alone) * 1000, 1),
                "short_during_long_p50_ms": round(statistics.median(during) * 1000, 1) if during else None,
                "short_during_long_max_ms": round(max(during) * 1000, 1) if during else None,
                "short_searches_during_long": len(during),
                "long_questions": long_n, "long_chars": chars,
                "long_p50_s": round(statistics.median(long_times), 2), "long_max_s": round(max(long_times), 2),
                "rss_mb_before": rss_before, "rss_mb_after": rss_mb(proc.pid)}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long", type=int, default=20, help="long questions sent through the daemon")
    ap.add_argument("--chars", type=int, default=100_000, help="characters of each long question")
    ap.add_argument("--sizes", default="100,2000,10000", help="question sizes searched in this process")
    args = ap.parse_args()
    samples = Path(__file__).resolve().parent.parent / "memory_samples" / "home"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(samples, home)
        out = {"in_process": in_process(home, [int(s) for s in args.sizes.split(",")]),
               "daemon": through_daemon(home, args.long, args.chars)}
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
