"""`get`: a memory by id, or a note's lines by `URI[:START[-END]]`, read from the Markdown as it is now."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import PurePosixPath

from indexer.errors import InputError, NotFoundError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import sha256_text
from indexer.notes.edit_lines import note_lines, range_text
from indexer.notes.scanner import read_note
from indexer.notes import trash
from indexer.notes.spaces import in_space, space_name, space_of, space_uri

ID = re.compile(r"^[0-9a-f]{16}$")
# uri, then `:12`, `:12-20`, or the `#L12-L20` form that recall's source lines carry
_REF = re.compile(r"^(?P<uri>.+?)(?:(?::|#L)(?P<start>\d+)(?:-L?(?P<end>\d+))?)?$")
_STAMP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?:(?P<day>\d{4}-\d{2}-\d{2})\s?)?(?P<time>\d{1,2}:\d{2})?:\s")
_DAY_NOTE = re.compile(r"(?:^|/)journal/(\d{4}-\d{2}-\d{2})\.md$")
COUNTERS = ("importance", "reinforcement", "access_count", "accessed_at", "strength", "created_at", "updated_at")


def get_memory(stores: list[Store], ref: str, space: str | None = None) -> dict:
    """The memory or line range as the note holds it now, with its id(s), lines, date and counters."""
    if not isinstance(ref, str) or not ref.strip():
        raise InputError("give a memory id (as search returns it) or a note path such as user/preference.md:3-5")
    ref, space = ref.strip(), space_name(space)
    if ID.match(ref):
        st, row = find_record(stores, ref, space)
        lines = note_lines(read_note(st.root / row["uri"], row["uri"])[0])
        return record_dict(st.name, row, lines)
    return _get_lines(stores, ref, space)


def find_record(stores: list[Store], record_id: str, space: str | None) -> tuple[Store, dict]:
    """The store and index row of a memory id in this space; NotFoundError otherwise."""
    if not isinstance(record_id, str) or not ID.match(record_id.strip()):
        raise InputError(f"{str(record_id)[:40]!r} is not a memory id; ids are 16 hex characters as search returns them")
    for st in stores:
        for row in rows_named(st, record_id.strip()):
            if in_space(row["uri"], space):
                return st, row
    raise not_found(stores, record_id, space)


def not_found(stores: list[Store], record_id: str, space: str | None = None) -> NotFoundError:
    """An id no store holds: forgotten when a store's record says so, else where it was looked for and both
    ways an id goes away (edits change ids, as the id is a hash of the text; forget removes them)."""
    record_id = str(record_id).strip()
    kept = next(((st, e) for st in stores if (e := trash.find(st.root, record_id)) and not e.get("replaced_by")),
                None)
    if kept is not None:
        return NotFoundError(f"no memory with id {record_id}: it was forgotten ({kept[1].get('removed_at') or 'earlier'}, "
                             f"{kept[0].name} store); `mdmem restore {record_id}` puts it back")
    gone = forgotten(stores, record_id)
    if gone is not None:
        return NotFoundError(f"no memory with id {record_id}: it was forgotten ({gone[1]}, {gone[0]} store); "
                             "add it again if it should be remembered")
    where = " and ".join(f"the {st.name} store {st.root}" for st in stores) or "no store"
    return NotFoundError(f"no memory with id {record_id}{_in(space)} in {where}; it may have been edited (ids "
                         "change with the text: search again for its current id) or forgotten")


def forgotten(stores: list[Store], record_id: str) -> tuple[str, str] | None:
    """(store, when) where mem0's history names this id as deleted (its trash entry may have expired)."""
    for st in stores:
        try:
            with open(st.root / trash.HISTORY_FILE, encoding="utf-8") as f:
                for line in f:
                    if record_id not in line:
                        continue  # most lines: no JSON parsed
                    with contextlib.suppress(ValueError):
                        row = json.loads(line)
                        if (isinstance(row, dict) and row.get("event") == "DELETE"
                                and record_id in (row.get("ids") or ())):
                            return st.name, f"deleted {row.get('created_at') or 'earlier'}"
        except OSError:
            continue  # no history: nothing known
    return None


def rows_named(st: Store, record_id: str) -> list[dict]:
    """The record with this id, or the one it became when its memory was edited since."""
    found = sql.chunks_by_ids(st.con, [record_id])
    if found:
        return found
    current = sql.resolve_alias(st.con, record_id)
    return sql.chunks_by_ids(st.con, [current]) if current else []


def record_dict(store: str, row: dict, lines: list[str] | None = None) -> dict:
    """One memory as every caller sees it; with the note's lines, its text as the Markdown holds it now."""
    text = row["content"] if lines is None else range_text(lines, row["start_line"], row["end_line"])
    out = {"id": row["id"], "uri": row["uri"], "store": store, "space": space_of(row["uri"]),
           "start_line": row["start_line"], "end_line": row["end_line"], "section": row["section"],
           "type": row["type"], "text": text, "hash": sha256_text(text), "date": record_date(row["uri"], text)}
    out.update({k: row[k] for k in COUNTERS})
    if lines is not None:
        out["in_step"] = text == row["content"]  # False: the note changed and is not indexed yet
    return out


def record_date(uri: str, text: str) -> str | None:
    """The date a memory carries: its `2025-01-05:` stamp, else its journal note's day (with `14:03:`)."""
    first = next((ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")), "")
    stamp = _STAMP.match(first)
    day = _DAY_NOTE.search(uri)
    if stamp and stamp["day"]:
        return stamp["day"] + (f" {stamp['time']}" if stamp["time"] else "")
    if day:
        return day.group(1) + (f" {stamp['time']}" if stamp and stamp["time"] else "")
    return None


def _get_lines(stores: list[Store], ref: str, space: str | None) -> dict:
    m = _REF.match(ref)
    uri, start, end = m["uri"], m["start"], m["end"]
    store_name = None
    if uri.startswith("mdmem://"):  # the resource form: mdmem://STORE/uri
        store_name, _, uri = uri[len("mdmem://"):].partition("/")
    uri = _checked_uri(uri, space)
    found = [st for st in stores if (store_name in (None, st.name)) and st.filter.admits(st.root / uri)
             and (st.root / uri).is_file()]
    if not found:
        raise NotFoundError(f"no note {uri}{_in(space)}; give a path relative to the store, e.g. user/preference.md")
    if len(found) > 1:
        raise InputError(f"{uri} is in both the global and the project store; choose one with scope")
    st = found[0]
    lines = note_lines(read_note(st.root / uri, uri)[0])
    first = int(start) if start else 1
    last = int(end) if end else (first if start else len(lines))
    if not 1 <= first <= last or first > len(lines):
        raise InputError(f"{uri} has {len(lines)} lines; ask for a range inside it, e.g. {uri}:1-{len(lines)}")
    last = min(last, len(lines))
    text = "\n".join(lines[first - 1:last])
    records = [{"id": r["id"], "start_line": r["start_line"], "end_line": r["end_line"], "hash": r["content_hash"]}
               for r in sql.chunks_for_uri(st.con, uri) if r["start_line"] <= last and first <= r["end_line"]]
    return {"uri": uri, "store": st.name, "space": space_of(uri), "start_line": first, "end_line": last,
            "lines": len(lines), "text": text, "hash": sha256_text(text.rstrip()), "records": records}


def _checked_uri(uri: str, space: str | None) -> str:
    """A note path inside the space (given relative to it or with its prefix) that cannot leave the store."""
    raw = uri.strip().replace("\\", "/").lstrip("/")
    parts = PurePosixPath(raw).parts
    if not raw or ".." in parts or any(p.startswith(".") or len(p.encode()) > 255 for p in parts):
        raise InputError(f"{uri[:80]!r} is not a note path; give one relative to the store, e.g. user/preference.md")
    if space and not in_space(raw, space):
        raw = space_uri(space, raw)
    if not in_space(raw, space):
        raise NotFoundError(f"no note {raw}{_in(space) or ' in the default space'}; it belongs to the space "
                            f"{space_of(raw) or '(none)'}, so pass that space")
    return raw


def recent_records(stores: list[Store], limit: int = 10, space: str | None = None,
                   span: tuple[str | None, str | None] = (None, None), type: str | None = None,
                   note: str | None = None) -> list[dict]:
    """The newest memories of the stores by their own date (then by when first indexed), newest first; span: ISO
    bounds as timespan.bounds gives them (the day after the last day), to keep those dated then; type and note
    (a part of the note's path) keep those of that type and in those notes."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InputError("limit must be a positive whole number, e.g. 10")
    space = space_name(space)
    rows = [(st.name, r) for st in stores
            for r in sql.newest_chunks(st.con, limit, space or "", *span, type=type, note=note)]
    rows.sort(key=lambda sr: (sr[1]["memory_date"] or "", sr[1]["created_at"]), reverse=True)
    return [record_dict(name, r) for name, r in rows[:limit]]


def _in(space: str | None) -> str:
    return f" in the space {space}" if space else ""
