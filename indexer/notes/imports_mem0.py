"""mem0 exports as imported notes: dated memories per user or agent space."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from indexer.notes.imports_model import Entry, ImportedNote, ImportFormatError, parse_when

LIST_KEYS = ("results", "records", "memories")  # get_all answers, the OSS migration artifact, other dumps


def mem0_records(obj):
    """The list of memories in a mem0 export, None when the object is not one."""
    items = obj
    if isinstance(obj, dict):
        items = next((obj[k] for k in LIST_KEYS if isinstance(obj.get(k), list)), None)
    if not isinstance(items, list) or not items:
        return None
    return items if all(isinstance(r, dict) and "memory" in r for r in items) else None


OWNER_KEYS = ("user_id", "agent_id", "run_id", "app_id")


def owner_of(record: dict) -> tuple[str | None, str | None]:
    """mem0's owner of a memory as (mdmem space, the key it came from): the user, else the agent, the run, the app."""
    for key in OWNER_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip(), key
    return None, None


def parse_mem0(path: Path, obj, space: str | None = None, zone: str = "") -> list[ImportedNote]:
    """Each memory becomes `- 2024-06-05: text` in its space's `user/fact.md` (the note `add` writes facts to)."""
    records = mem0_records(obj)
    if records is None:
        raise ImportFormatError(path, None, "not a mem0 export (a list of memories with \"memory\", or "
                                "{\"results\": [...]}); pass --format if it is another format")
    by_space: dict[str | None, list[Entry]] = defaultdict(list)
    for i, rec in enumerate(records):
        text = rec.get("memory")
        if not isinstance(text, str):
            raise ImportFormatError(path, None, f"memory {rec.get('id', i)} has no \"memory\" text")
        if not text.strip():
            continue
        when = parse_when(rec.get("created_at"), zone) or parse_when(rec.get("updated_at"), zone)
        target = space if space is not None else owner_of(rec)[0]
        by_space[target].append(Entry(text=text, when=when))
    return [ImportedNote(space=sp, uri="user/fact.md", title="Facts", type="fact", kind="dated",
                         entries=tuple(entries), source=str(path))
            for sp, entries in by_space.items()]
