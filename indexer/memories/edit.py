"""`update`: change one memory's lines in its note, checked, its old text kept in the trash; and what forget shares."""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.errors import ConflictError, InputError, MdmemError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import sha256_text
from indexer.notes.append import strip_item
from indexer.notes.edit_lines import LineEdit, edit_lines, note_lines, note_target, range_text
from indexer.notes.privacy import screen
from indexer.notes import trash
from indexer.notes.scanner import read_note
from indexer.notes.spaces import space_name, space_of
from indexer.memories.add import MAX_ADD_CHARS
from indexer.memories.get import find_record

_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


@dataclass(frozen=True)
class Body:
    """The memory's own lines inside its record: the headings a chunk starts with are the note's, not its."""

    start: int
    end: int
    text: str


def update_memory(record_id: str, text: str, *, stores: list[Store], writes, warn, space: str | None = None,
                  expected_hash: str | None = None, redact: bool = False, keep: bool = True) -> dict:
    """Replace one memory's text in its note (a list item keeps its marker and date) and index it now.

    `writes` changes the index (at once in-process, as writer jobs under the daemon); with keep, the old
    text goes to the trash first (a line struck through by a newer value stays in its note: no need).
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("give the memory's new text; to remove it use forget")
    if len(text) > MAX_ADD_CHARS:
        raise InputError(f"new text is {len(text)} characters; keep one memory under {MAX_ADD_CHARS}")
    text, redacted = screen(text.strip(), redact)  # before anything touches the note
    writes.settle_counts([s.name for s in stores])  # the counters read below are carried to the new record
    st, row, body, lines = checked_record(stores, record_id, space_name(space), expected_hash)
    new = _as_item(body.text, text)
    target = note_target(st.name, st.root, row["uri"])
    if keep:  # the text it had can be put back (`restore`) until the trash lets it go
        trash.keep(st.root, trash_entry(st, row, body, lines, "update", replaced_by=new))
    try:
        edit_lines(target, [LineEdit(body.start, body.end, body.text, new)])
    except MdmemError:
        if keep:
            trash.drop(st.root, row["id"])
        raise
    end = body.start + new.count("\n")
    indexed, new_id = index_note(writes, target, warn, carry=(row, body.start))
    fresh = sql.chunks_by_ids(st.con, [new_id]) if new_id else []
    return {"action": "updated", "id": new_id, "previous_id": row["id"],
            "uri": row["uri"], "store": st.name, "space": space_of(row["uri"]), "start_line": body.start,
            "end_line": end, "hash": sha256_text(fresh[0]["content"]) if fresh else None,  # as get gives it
            "redacted": redacted, "indexed": indexed}


def checked_record(stores, record_id, space, expected_hash) -> tuple[Store, dict, Body, list[str]]:
    """The record, its body and its note's lines; refused when the note no longer holds what the index (or the
    caller) last saw."""
    st, row = find_record(stores, record_id, space)
    lines = note_lines(read_note(st.root / row["uri"], row["uri"])[0])
    now = range_text(lines, row["start_line"], row["end_line"])
    if now != row["content"]:
        raise ConflictError(f"{row['uri']} lines {row['start_line']}-{row['end_line']} changed since memory "
                            f"{record_id} was indexed; search or get it again for its current id")
    if expected_hash is not None and expected_hash != sha256_text(now):
        raise ConflictError(f"memory {record_id} changed since it was read (its hash differs); get it again "
                            "and retry")
    return st, row, body_of(lines, row), lines


def trash_entry(st: Store, row: dict, body: Body, lines: list[str], reason: str, replaced_by: str | None = None) -> dict:
    """What the trash keeps of a memory's removed lines: the text, where it was, and the ids that named it."""
    return {"id": row["id"], "ids": sql.ids_naming(st.con, row["id"]), "store": st.name, "uri": row["uri"],
            "space": space_of(row["uri"]), "start_line": body.start, "end_line": body.end, "text": body.text,
            "reason": reason, "replaced_by": replaced_by, **trash.context(lines, body.start, body.end)}


def body_of(lines: list[str], row: dict) -> Body:
    start, end = row["start_line"], row["end_line"]
    while start <= end and (not lines[start - 1].strip() or _HEADING.match(lines[start - 1])):
        start += 1
    if start > end:
        raise InputError(f"{row['uri']} lines {row['start_line']}-{end} hold only headings, not a memory; "
                         "edit the note itself")
    if range_text(lines, start, end) not in row["content"]:
        raise InputError(f"memory {row['id']} is part of a longer line of {row['uri']}; edit the note itself")
    units = _units(lines[start - 1:end])
    if units > 1:  # one text cannot stand for several: the others would be lost
        raise InputError(f"memory {row['id']} holds {units} separate items ({row['uri']} lines {start}-{end}); "
                         "change one of them in the note itself")
    return Body(start, end, range_text(lines, start, end))


def _units(lines: list[str]) -> int:
    """How many paragraphs or list items start at the block's own indentation (continuations excluded)."""
    base = min(len(ln) - len(ln.lstrip()) for ln in lines if ln.strip())
    count, after_blank = 0, True
    for ln in lines:
        if not ln.strip():
            after_blank = True
            continue
        if len(ln) - len(ln.lstrip()) == base and (after_blank or _ITEM.match(ln)):
            count += 1
        after_blank = False
    return count


def _as_item(old: str, text: str) -> str:
    """The new text in the old one's form: a list item keeps its marker, date stamp and indentation."""
    first = old.split("\n", 1)[0]
    if not _ITEM.match(first):
        return text
    kept = first.rstrip()
    prefix = kept[:len(kept) - len(strip_item(first))]
    indent = " " * (len(first) - len(first.lstrip()) + 2)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join([prefix + lines[0].strip()] + [(indent + ln.rstrip()) if ln.strip() else "" for ln in lines[1:]])


def index_note(writes, target, warn, carry: tuple[dict, int] | None = None) -> tuple[bool, str | None]:
    """Index the edited note now: (indexed, the id of the record now at the carried line, or None).

    With carry (old row, first line) that record keeps the old counters. The note is written
    either way; when indexing fails the daemon or `mdmem index` catches up.
    """
    try:
        writes.index_notes(target.store, [target.path])
        if carry is None:
            return True, None
        old, first = carry
        return True, writes.carry_counters(target.store, target.uri, first, old)
    except MdmemError as exc:
        warn(f"{target.uri}: written but not indexed yet ({exc}); run `mdmem index`")
        return False, None
