"""`recent`: the newest memories of the chosen stores by their own date, without a query."""

from __future__ import annotations

from indexer.errors import InputError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import Hit
from indexer.ops.search import row_hit


def recent(stores: list[Store], limit: int = 10) -> list[Hit]:
    """Newest first across the stores; a memory's score is 0 (nothing was asked)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InputError(f"limit must be a positive whole number, not {limit!r}; e.g. mdmem recent --limit 20")
    found = [(st.name, r) for st in stores for r in sql.recent_memories(st.con, limit)]
    found.sort(key=lambda item: (item[1]["memory_date"] or "", item[0], item[1]["uri"], item[1]["start_line"]),
               reverse=True)
    return [row_hit(r, name, 0.0) for name, r in found[:limit]]
