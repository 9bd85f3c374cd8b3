"""The trash: what forget removed and update replaced, kept private in `<root>/.trash/` until it expires."""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

from indexer.errors import for_os_error
from indexer.notes.append import Target, note_lock, replace_whole, strip_item

FOLDER = ".trash"  # a dot-folder: never indexed, never listed as a note
HISTORY_FILE = ".mem0-history.jsonl"  # mem0's history log beside the global store's notes (daemon/mem0_events)
CONTEXT_LINES = 2  # lines kept on each side, to find the place again (one side may have been forgotten too)
DAY_S = 86400
_ID = re.compile(r"^[0-9a-f]{16}$")


def keep(root: Path, entry: dict) -> None:
    """Write one entry (0600 in a 0700 folder) atomically and durably, before the note loses its text."""
    folder = Path(root) / FOLDER
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # also when it was made by hand, or under a loose umask
        entry = {**entry, "removed_ts": time.time(),
                 "removed_at": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")}
        path = folder / f"{entry['id']}.json"
        _write(path, json.dumps(entry, ensure_ascii=False).encode("utf-8"))
        os.chmod(path, 0o600)  # a file of that name made by hand keeps no looser mode
    except OSError as exc:
        raise for_os_error(exc, folder) from exc


def context(lines: list[str], start: int, end: int) -> dict:
    """The lines around start..end (1-based) that tell its place, and whether they reach the note's edges."""
    return {"before": lines[max(0, start - 1 - CONTEXT_LINES):start - 1], "after": lines[end:end + CONTEXT_LINES],
            "at_start": start - 1 <= CONTEXT_LINES, "at_end": end + CONTEXT_LINES >= len(lines)}


def entries(root: Path) -> list[dict]:
    """Every entry of a store's trash, newest first (a damaged file is left alone, never fatal)."""
    out = []
    for path in (Path(root) / FOLDER).glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            entry = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(entry, dict) and _ID.match(str(entry.get("id"))) and isinstance(entry.get("text"), str):
                out.append(entry)
    return sorted(out, key=lambda e: -float(e.get("removed_ts") or 0))


def find(root: Path, trash_id: str) -> dict | None:
    """The entry this id names: the removed memory's id, or any id it had before."""
    for entry in entries(root):
        if trash_id == entry["id"] or trash_id in entry.get("ids", ()):
            return entry
    return None


def drop(root: Path, trash_id: str) -> bool:
    try:
        (Path(root) / FOLDER / f"{trash_id}.json").unlink()
        return True
    except FileNotFoundError:
        return False


def drop_naming(root: Path, ids: set[str], texts: set[str]) -> int:
    """Remove the entries of these ids or holding these texts, and these lines from the others' context (a
    purge leaves no copy behind; the lines are gone from the note too, so the others still fit their place)."""
    purged = {ln for t in texts for ln in t.split("\n") if ln.strip()}
    dropped = 0
    for e in entries(root):
        if ids & {e["id"], *e.get("ids", ())} or e["text"] in texts or e.get("replaced_by") in texts:
            dropped += drop(root, e["id"])
        elif purged & {*e.get("before", ()), *e.get("after", ())}:
            scrubbed = {side: [ln for ln in e.get(side, ()) if ln not in purged] for side in ("before", "after")}
            _write(Path(root) / FOLDER / f"{e['id']}.json", json.dumps({**e, **scrubbed}, ensure_ascii=False).encode())
    return dropped


def expire(root: Path, days: float, now: float | None = None) -> int:
    """Drop the entries older than the retention period; how many went."""
    cutoff = (time.time() if now is None else now) - days * DAY_S
    return sum(drop(root, e["id"]) for e in entries(root) if float(e.get("removed_ts") or 0) < cutoff)


def scrub_history(home: Path, ids: set[str], texts: set[str]) -> int:
    """Remove from mem0's history log every event of these memories (ids chain through updates) or
    holding these texts; the log is rewritten atomically. How many events went."""
    path = Path(home) / HISTORY_FILE
    with history_lock(home):
        try:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        except FileNotFoundError:
            return 0
        rows = [_row(line) for line in lines]
        names, gone, grew = set(ids), set(), True
        while grew:  # a -> b -> c: every id of the memory, as the log links them
            grew = False
            for i, r in enumerate(rows):
                if i not in gone and r is not None and (names & set(r.get("ids") or ()) or _holds(r, texts)):
                    gone.add(i)
                    names |= set(r.get("ids") or ())
                    grew = True
        if not gone:
            return 0
        _write(path, "".join(line for i, line in enumerate(lines) if i not in gone).encode("utf-8"))
        return len(gone)


def history_lock(home: Path):
    """One writer of mem0's history log at a time, across processes (an append never lands in a replaced file)."""
    return note_lock(Target(store="global", root=Path(home), uri=HISTORY_FILE, path=Path(home) / HISTORY_FILE,
                            title=""))


def _holds(row: dict, texts: set[str]) -> bool:
    """An event whose old or new memory says one of the texts (mem0 keeps them without marker or stamp)."""
    said = [_plain(s) for s in (row.get("old_memory"), row.get("new_memory")) if isinstance(s, str)]
    wanted = [_plain(t) for t in texts]
    return any(s and t and t in s for s in said for t in wanted)


def _plain(text: str) -> str:
    return " ".join(" ".join(strip_item(ln) for ln in text.split("\n") if not ln.lstrip().startswith("#")).split())


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def _write(path: Path, data: bytes) -> None:
    """Replace the file atomically (temp file, fsync, swap; its folder synced): what it held is whole or gone."""
    replace_whole(path, lambda _cur: data)  # only mdmem writes here, under a lock: a second try is already rare
