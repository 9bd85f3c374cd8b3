"""The decision log: what `add` decided on its own (reinforce, supersede, keep a near pair) and the review queue, one
JSON line per event in `<root>/.decisions.jsonl` (a dot file: never indexed, kept by `rebuild`, 0600)."""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

from indexer.errors import NoteError, for_os_error
from indexer.notes.append import ATTEMPTS, Target, note_lock, read_bytes, strip_item, swap_bytes_in
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


def scrub(root: Path, ids: set[str], texts: set[str]) -> int:
    """Remove every line of the decisions about these memories (by id, or holding these texts: a purge leaves no
    copy here either); the log is rewritten atomically. How many decisions went."""
    path = Path(root) / FILE
    said = {" ".join(strip_item(ln) for ln in t.split("\n") if ln.strip() and not ln.lstrip().startswith("#"))
            for t in texts}
    said = {t for t in said if t.strip()}
    with _lock(root):
        for _ in range(ATTEMPTS):  # only mdmem writes here, under the lock: a second try is already rare
            data = read_bytes(path)
            if not data:
                return 0
            # what is kept is made from what the file holds now: a line written since the last try stays
            lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
            rows = [_row(line) for line in lines]
            gone = {r["id"] for r in rows if r is not None and "action" in r and (
                ids & {r.get("memory_id"), r.get("old_id"), r.get("near_id")} or
                any(t in str(r.get(k) or "") for t in said for k in ("text", "old_text", "near_text")))}
            if not gone:
                return 0
            kept = "".join(line for line, r in zip(lines, rows) if r is None or r["id"] not in gone).encode("utf-8")
            if swap_bytes_in(path, kept, data, data)[0]:
                return len(gone)
    raise NoteError(f"{path.name} kept changing while the purged memory was taken out of it; purge again")


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and isinstance(row.get("id"), str) else None


def _lock(root: Path):
    return note_lock(Target(store="", root=Path(root), uri=FILE, path=Path(root) / FILE, title=""))
