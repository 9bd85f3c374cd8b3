"""The decision log: what `add` decided on its own (reinforce, supersede, keep a near pair) and the review queue, one
JSON line per event in `<root>/.decisions.jsonl` (a dot file: never indexed, kept by `rebuild`, 0600)."""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

from indexer.errors import for_os_error
from indexer.notes.append import Target, note_lock
from indexer.private_files import open_private

FILE = ".decisions.jsonl"
# an entry is its first line; later lines of the same id change its state (accepted, rejected, edited, undone)
STATES = ("pending", "accepted", "rejected", "edited", "undone")


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def append(root: Path, event: dict) -> None:
    """One line, fsynced before the caller is answered, under the log's lock (one writer at a time)."""
    path = Path(root) / FILE
    line = json.dumps({"at": now_iso(), **event}, ensure_ascii=False)
    try:
        with _lock(root), os.fdopen(open_private(path), "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise for_os_error(exc, path) from exc


def entries(root: Path) -> list[dict]:
    """Every decision of the store, oldest first, each with its state folded in (`status`, `resolved_at`, ...);
    a line cut by a crash is skipped, never fatal."""
    try:
        with open(Path(root) / FILE, encoding="utf-8") as f:
            rows = [_row(line) for line in f]
    except FileNotFoundError:
        return []
    out: dict[str, dict] = {}
    for r in rows:
        if r is None:
            continue
        if "action" in r and r["id"] not in out:
            out[r["id"]] = {**r, "status": "pending" if r.get("review") else "done"}
        elif r["id"] in out and r.get("status") in STATES:
            out[r["id"]].update({k: v for k, v in r.items() if k not in ("id", "at", "action")},
                                resolved_at=r.get("at"))
    return list(out.values())


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and isinstance(row.get("id"), str) else None


def _lock(root: Path):
    return note_lock(Target(store="", root=Path(root), uri=FILE, path=Path(root) / FILE, title=""))
