"""A big note never holds back small ones: small saves made while the daemon embeds a 2 MB note.

    HF_HUB_OFFLINE=1 python bench/big_note_bench.py --sections 4000 --small 5

Starts `mdmem serve` (real model) on an empty temporary store, saves a note of SECTIONS sections,
then, while it is being embedded, saves SMALL one-paragraph notes one second apart and times each
from its save until a full-text search through the daemon returns it; last, the time until the big
note is searchable. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer import config  # noqa: E402
from indexer.remote import Client, socket_path  # noqa: E402


def found(client: Client, word: str) -> bool:
    return bool(client.call("search", {"query": word, "mode": "fts", "limit": 1, "bump": False}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", type=int, default=4000)
    ap.add_argument("--small", type=int, default=5)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mdmem-big-note-"))
    home, run = base / "home", base / "run"
    (home / "user").mkdir(parents=True)
    run.mkdir()
    os.environ["XDG_RUNTIME_DIR"] = str(run)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        path = socket_path(config.load(home=home, env={}))
        deadline = time.monotonic() + 120
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        client = Client(path, timeout=120)
        big = home / "user" / "big.md"
        text = "".join(f"## Day {i}\n\nOn day {i} the caravan crossed dune number {i * 7} before noon, and the "
                       f"guide counted {i % 13} camels at the well.\n\n" for i in range(args.sections))
        t_big = time.monotonic()
        big.write_text(text + "The last line names the bigword zanzibarite.\n")
        time.sleep(1.0)
        waits = []
        for n in range(args.small):
            word = f"smallword{n}x"
            (home / "user" / f"small{n}.md").write_text(f"# Small {n}\n\nA short save naming {word}.\n")
            t = time.monotonic()
            while not found(client, word) and time.monotonic() - t < 120:
                time.sleep(0.02)
            waits.append(round((time.monotonic() - t) * 1000))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
        while not found(client, "zanzibarite") and time.monotonic() - t_big < 600:
            time.sleep(0.1)
        big_s = round(time.monotonic() - t_big, 1)
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    print(json.dumps({"big_note_bytes": len(text.encode()), "sections": args.sections,
                      "small_save_to_searchable_ms": waits, "big_note_searchable_s": big_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
