"""Appends racing a saving editor under a busy interpreter: does any editor save or memory go missing?

Each run: one note, an editor process saving a new line every few milliseconds (write, fsync, atomic
exchange, the way tests/racing_editor.py does), `--writers` threads appending `--each` memories, and
`--busy` threads holding the interpreter (a daemon's other work), which stretches the instant between
mdmem's look and its swap. Counts the runs that lost an editor save or a memory.

    python bench/racing_saves.py --runs 20 --busy 1
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from indexer.errors import NoteError  # noqa: E402
from indexer.notes.append import Target, append_entry  # noqa: E402
from racing_editor import EDITOR  # noqa: E402


def one_run(folder: Path, writers: int, each: int, busy: int) -> dict:
    note = folder / "n.md"
    note.write_text("# Load\n\n- opening line\n")
    stop = folder / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(stop)], stdout=subprocess.PIPE, text=True)
    target, refused, done = Target("global", folder, "n.md", note, "Load"), [], threading.Event()

    def hold_interpreter():
        while not done.is_set():
            sum(range(2000))

    def write(i: int):
        for k in range(each):
            try:
                append_entry(target, f"- memory {i}.{k}\n", "")
            except NoteError:
                refused.append((i, k))  # answered with an error: not acknowledged, so not owed

    holders = [threading.Thread(target=hold_interpreter) for _ in range(busy)]
    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in holders + threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    for t in holders:
        t.join()
    stop.touch()
    edits = int(editor.communicate(timeout=120)[0])
    text = note.read_text()
    aside = "".join(p.read_text() for p in folder.glob(".*.unmerged-*"))  # a busy answer's kept save
    return {"edits": edits, "lost_edits": sum(f"editor line {n}\n" not in text + aside for n in range(edits)),
            "edits_only_aside": sum(f"editor line {n}\n" not in text and f"editor line {n}\n" in aside
                                    for n in range(edits)),
            "lost_memories": sum(f"- memory {i}.{k}\n" not in text for i in range(writers) for k in range(each)
                                 if (i, k) not in refused),
            "refused": len(refused), "unmerged": len(list(folder.glob(".*.unmerged-*")))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--writers", type=int, default=12)
    ap.add_argument("--each", type=int, default=8)
    ap.add_argument("--busy", type=int, default=1)
    args = ap.parse_args()
    bad = 0
    for r in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            res = one_run(Path(d), args.writers, args.each, args.busy)
        if res["lost_edits"] or res["lost_memories"]:
            bad += 1
        print(f"run {r}: {res}", flush=True)
    print(f"runs that lost a save or a memory: {bad} of {args.runs}")


if __name__ == "__main__":
    main()
