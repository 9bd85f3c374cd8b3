"""`restore`: put a forgotten or corrected memory back where it was, from the trash; and the trash's list."""

from __future__ import annotations

import hashlib
import time

from indexer.errors import NotFoundError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.memories.cite import cited_chunk
from indexer.memories.edit import index_note
from indexer.models import sha256_text
from indexer.notes import trash
from indexer.notes.append import append_entry, read_bytes
from indexer.notes.edit_lines import LineEdit, edit_lines, note_lines, note_target, range_text
from indexer.notes.spaces import in_space, space_of

MARKER = "## Restored"  # the heading a memory is put back under when the lines around it are gone


def trash_list(stores: list[Store], days: float, space: str | None = None) -> dict:
    """The trash of these stores in this space, newest first, each with the day it expires."""
    out = []
    for st in stores:
        for e in trash.entries(st.root):
            if in_space(e["uri"], space):
                out.append({k: e.get(k) for k in ("id", "uri", "space", "start_line", "end_line", "text", "reason",
                                                  "replaced_by", "removed_at")}
                           | {"store": st.name, "expires_in_days": _days_left(e, days)})
    out.sort(key=lambda e: e["removed_at"] or "", reverse=True)
    return {"trash_days": days, "count": len(out), "entries": out}


def restore_memory(trash_id: str, *, stores: list[Store], writes, warn, space: str | None = None) -> dict:
    """Put the entry's lines back in their note (in place when the lines around them are still there, else
    under MARKER at its end; the note is made again if it was deleted), index it and empty the entry."""
    st, entry = _entry(stores, trash_id, space)
    target = note_target(st.name, st.root, entry["uri"])
    data = read_bytes(target.path)
    lines = note_lines(data) if data else []
    text = entry["text"]
    placed, start = _put_back(st, target, entry, data, lines)
    end = start + text.count("\n")
    trash.drop(st.root, entry["id"])
    indexed, _ = index_note(writes, target, warn)
    new_id = None
    if indexed:
        start, end, new_id = cited_chunk(stores, st.name, entry["uri"], start, end)
    return {"action": "restored", "placed": placed, "id": new_id, "trash_id": entry["id"], "uri": entry["uri"],
            "store": st.name, "space": space_of(entry["uri"]), "start_line": start, "end_line": end, "text": text,
            "indexed": indexed}


def _entry(stores: list[Store], trash_id: str, space: str | None) -> tuple[Store, dict]:
    for st in stores:
        entry = trash.find(st.root, str(trash_id).strip())
        if entry is not None and in_space(entry["uri"], space):
            return st, entry
    where = f" in space {space}" if space else ""
    raise NotFoundError(f"nothing in the trash with id {trash_id}{where}; `mdmem trash` lists what can be restored")


def _put_back(st: Store, target, entry: dict, data: bytes | None, lines: list[str]) -> tuple[str, int]:
    """Where the text went ("replaced", "in_place", "appended", "recreated") and its first line."""
    text = entry["text"]
    if not data:
        append_entry(target, text + "\n", "")
        return "recreated", 1
    if entry.get("replaced_by"):
        at = _nearest([s for s in range(1, len(lines) + 1)
                       if range_text(lines, s, s + entry["replaced_by"].count("\n")) == entry["replaced_by"].rstrip()],
                      entry["start_line"])
        if at is not None:  # undo the correction; the corrected text is kept in its turn
            end = at + entry["replaced_by"].count("\n")
            trash.keep(st.root, {**entry, "id": _line_id(st, entry["uri"], at, end, entry["replaced_by"]), "ids": [],
                                 "start_line": at, "end_line": end, "text": entry["replaced_by"],
                                 "replaced_by": text, **trash.context(lines, at, end)})
            edit_lines(target, [LineEdit(at, end, entry["replaced_by"], text)])
            return "replaced", at
    k = text.count("\n")
    there = _nearest([s for s in range(1, len(lines) - k + 1) if range_text(lines, s, s + k) == text.rstrip()],
                     entry["start_line"])
    if there is not None:  # written again meanwhile (by hand, or a second restore): never twice
        return "present", there
    at = _place(lines, entry)
    if at is not None:
        if at < len(lines):  # in front of the line that followed it
            edit_lines(target, [LineEdit(at + 1, at + 1, lines[at], text + "\n" + lines[at])])
        else:  # after the note's last line
            edit_lines(target, [LineEdit(at, at, lines[at - 1], lines[at - 1] + "\n" + text)])
        return "in_place", at + 1
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    heading = next((ln for ln in reversed(lines) if ln.startswith("#")), None)
    block = ("" if heading == MARKER else MARKER + "\n\n") + text + "\n"
    if heading != MARKER and last.lstrip().startswith(("- ", "* ", "+ ")):
        block = "\n" + block  # compose gives a list's last item only its line end: a blank line before the heading
    _start, end = append_entry(target, block, "")
    return "appended", end - text.count("\n")


def _place(lines: list[str], entry: dict) -> int | None:
    """The gap (0: before the first line) whose neighbours are the lines that were around the memory: both
    sides when they are still there, else one side that says something, nearest the old place."""
    before, after, n = entry.get("before") or [], entry.get("after") or [], len(lines)
    edge_before, edge_after = bool(entry.get("at_start")), bool(entry.get("at_end"))
    both, one = [], []
    for p in range(n + 1):
        fit_b = lines[max(0, p - len(before)):p] == before and p >= len(before) and (not edge_before or p == len(before))
        fit_a = lines[p:p + len(after)] == after and (not edge_after or p + len(after) == n)
        if fit_b and fit_a:
            both.append(p)
        elif (fit_b and any(ln.strip() for ln in before)) or (fit_a and any(ln.strip() for ln in after)):
            one.append(p)
    return _nearest(both, entry["start_line"] - 1) if both else _nearest(one, entry["start_line"] - 1)


def _nearest(places: list[int], wanted: int) -> int | None:
    return min(places, key=lambda p: (abs(p - wanted), p)) if places else None


def _line_id(st: Store, uri: str, start: int, end: int, text: str) -> str:
    """The id of the record at these lines, or one made as records' ids are."""
    row = next((r for r in sql.chunks_for_uri(st.con, uri) if r["start_line"] <= start <= r["end_line"]), None)
    if row is not None:
        return row["id"]
    return hashlib.sha256(f"{uri}:{start}:{end}:{sha256_text(text)}".encode()).hexdigest()[:16]


def _days_left(entry: dict, days: float) -> float:
    left = float(entry.get("removed_ts") or 0) + days * trash.DAY_S - time.time()
    return round(max(0.0, left) / trash.DAY_S, 1)
