"""The decision log: what `add` decided on its own (reinforce, supersede, keep a near pair) and the review queue, one
JSON line per event in `<root>/.decisions.jsonl` (a dot file: never indexed, kept by `rebuild`, 0600)."""

from __future__ import annotations

import json
import os
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from indexer.errors import NoteError, for_os_error
from indexer.notes.append import ATTEMPTS, Target, note_lock, read_bytes, strip_item, swap_bytes_in
from indexer.private_files import open_private

FILE = ".decisions.jsonl"
# an entry is its first line; later lines of the same id change its state (accepted, rejected, edited, undone)
STATES = ("pending", "accepted", "rejected", "edited", "undone")
DAY_S = 86400.0


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
            return _folded([_row(line) for line in f])
    except FileNotFoundError:
        return []


def _folded(rows: list[dict | None]) -> list[dict]:
    out: dict[str, dict] = {}
    for r in rows:
        if r is None:
            continue
        if "action" in r and r["id"] not in out:  # an expired proposal's one line carries its final status
            out[r["id"]] = {**r, "status": r.get("status") or ("pending" if r.get("review") else "done")}
        elif r["id"] in out and r.get("status") in STATES:
            out[r["id"]].update({k: v for k, v in r.items() if k not in ("id", "at", "action")},
                                resolved_at=r.get("at"))
    return list(out.values())


def scrub(root: Path, ids: set[str], texts: set[str]) -> int:
    """Remove every line of the decisions about these memories (by id, or holding these texts: a purge leaves no
    copy here either); the log is rewritten atomically. How many decisions went."""
    said = {" ".join(strip_item(ln) for ln in t.split("\n") if ln.strip() and not ln.lstrip().startswith("#"))
            for t in texts}
    said = {t for t in said if t.strip()}

    def gone(rows: list[dict | None]) -> tuple[set[str], dict]:
        return {r["id"] for r in rows if r is not None and "action" in r and (
            ids & {r.get("memory_id"), r.get("old_id"), r.get("near_id")} or
            any(t in str(r.get(k) or "") for t in said for k in ("text", "old_text", "near_text")))}, {}
    return _rewrite(root, gone)


def expire(root: Path, days: float, now: float | None = None) -> int:
    """Drop the decisions whose last line is older than `days` (the cleanup pass), keeping every one still waiting
    for review; a proposal leaves one short line (space, week, status) so its week is not proposed again. How
    many decisions went."""
    cutoff = (time.time() if now is None else now) - days * DAY_S

    def old(rows: list[dict | None]) -> tuple[set[str], dict]:
        states, last = {e["id"]: e for e in _folded(rows)}, {}
        for r in rows:
            if r is not None:
                last[r["id"]] = max(last.get(r["id"], float("-inf")), _ts(r.get("at")))
        out = {i for i, t in last.items() if t < cutoff and not states.get(i, {}).get("expired")
               and states.get(i, {}).get("status") != "pending"}
        return out, {i: _tombstone(states[i]) for i in out if states.get(i, {}).get("action") == "proposed"}
    return _rewrite(root, old)


def _tombstone(entry: dict) -> str:
    keep = ("id", "at", "action", "space", "week", "uri", "status", "resolved_at")
    return json.dumps({k: entry.get(k) for k in keep} | {"text": "", "expired": True}, ensure_ascii=False) + "\n"


def _ts(at) -> float:
    """A line's time in seconds; a line without a readable one is taken as new (kept)."""
    try:
        return datetime.fromisoformat(str(at)).timestamp()
    except ValueError:
        return float("inf")


def _rewrite(root: Path, choose) -> int:
    """Rewrite the log without the decisions `choose(rows)` names ({id: a line to put in their place}), atomically
    and under the log's lock; how many went."""
    path = Path(root) / FILE
    with _lock(root):
        for _ in range(ATTEMPTS):  # only mdmem writes here, under the lock: a second try is already rare
            data = read_bytes(path)
            if not data:
                return 0
            # what is kept is made from what the file holds now: a line written since the last try stays
            lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
            rows = [_row(line) for line in lines]
            gone, instead = choose(rows)
            if not gone:
                return 0
            kept, placed = [], set()
            for line, r in zip(lines, rows):
                if r is None or r["id"] not in gone:
                    kept.append(line)
                elif r["id"] in instead and r["id"] not in placed:
                    kept.append(instead[r["id"]])
                    placed.add(r["id"])
            if swap_bytes_in(path, "".join(kept).encode("utf-8"), data, data)[0]:
                return len(gone)
    raise NoteError(f"{path.name} kept changing while decisions were taken out of it; try again")


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) and isinstance(row.get("id"), str) else None


def _lock(root: Path):
    return note_lock(Target(store="", root=Path(root), uri=FILE, path=Path(root) / FILE, title=""))
