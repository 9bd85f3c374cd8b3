"""mem0's memory history: what HTTP calls added, changed and deleted, one JSON line each, beside the notes."""

from __future__ import annotations

import json
import os
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path

from indexer.notes.trash import HISTORY_FILE, history_lock
from indexer.private_files import open_private

FILE = HISTORY_FILE  # a dot file: never indexed, and the old text of an update is kept in it (purge scrubs it)
_LOCK = threading.Lock()  # HTTP handlers run on a thread pool: one line at a time


def record(home: Path, event: str, ids: list[str], old: str | None, new: str | None, space: str | None,
           metadata: dict | None) -> None:
    """Append one event (ADD, UPDATE, DELETE) and fsync it before the caller is answered."""
    line = json.dumps({"id": str(uuid.uuid4()), "ids": [i for i in dict.fromkeys(ids) if i], "event": event,
                       "old_memory": old, "new_memory": new, "space": space, "metadata": metadata,
                       "created_at": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")},
                      ensure_ascii=False)
    with _LOCK, history_lock(home), os.fdopen(open_private(Path(home) / FILE), "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def events(home: Path, memory_id: str) -> list[dict]:
    """Every event of the memory this id names, oldest first (an update links its old and new ids)."""
    try:
        with open(Path(home) / FILE, encoding="utf-8") as f:
            rows = [_row(line) for line in f]
    except FileNotFoundError:
        return []
    rows = [r for r in rows if r is not None]
    names, found = {memory_id}, {}
    grew = True
    while grew:  # ids chain through updates: a -> b -> c all name one memory
        grew = False
        for i, r in enumerate(rows):
            if i not in found and names & set(r["ids"]):
                found[i] = r
                names |= set(r["ids"])
                grew = True
    return [found[i] for i in sorted(found)]


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None  # a line cut by a crash mid-write: the others still count
    return row if isinstance(row, dict) and isinstance(row.get("ids"), list) else None
