"""Which space a memory id lives in, for callers that name a memory by id alone (mem0's REST paths)."""

from __future__ import annotations

from indexer.errors import InputError
from indexer.index.stores import Store
from indexer.notes.spaces import space_of
from indexer.memories.get import ID, not_found, rows_named


def space_of_memory(stores: list[Store], record_id: str) -> str | None:
    """The space of the memory (None: the default space); NotFoundError when no store holds the id."""
    if not isinstance(record_id, str) or not ID.match(record_id):
        raise InputError(f"{str(record_id)[:40]!r} is not a memory id; ids are 16 hex characters as search returns them")
    for st in stores:
        for row in rows_named(st, record_id):
            return space_of(row["uri"])
    raise not_found(stores, record_id)
