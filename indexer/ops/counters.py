"""The counters of records, written to one store: accesses (a record handed out) and reinforcements."""

from __future__ import annotations

from indexer.index import db
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import Hit

ACCESS_BUSY_MS = 250  # an access count is worth less than a search that waits on a long write


def ids_by_store(hits: list[Hit]) -> dict[str, list[str]]:
    """The returned records of each store, in the order they were returned."""
    out: dict[str, list[str]] = {}
    for h in hits:
        out.setdefault(h.store, []).append(h.id)
    return out


def count_access(st: Store, ids: list[str]) -> None:
    """Count each returned record; never make a caller wait long behind a busy writer."""
    if not ids:
        return
    st.con.set_busy_timeout(ACCESS_BUSY_MS)
    try:
        with db.transaction(st.con):
            sql.increment_access_count(st.con, ids)
    except db.BusyError:
        pass  # a long write holds the lock; losing one count beats blocking the search
    finally:
        st.con.set_busy_timeout(db.BUSY_TIMEOUT_MS)


def reinforce(st: Store, chunk_id: str) -> float | None:
    """One more restatement of a record; its new reinforcement (None when the record is gone)."""
    with db.transaction(st.con):
        sql.increment_reinforcement(st.con, [chunk_id])
    fresh = sql.chunks_by_ids(st.con, [chunk_id])
    return fresh[0]["reinforcement"] if fresh else None


def carry(st: Store, uri: str, line: int, old: dict) -> str | None:
    """The record now holding `line` of a just-edited note takes over an old record's counters; its id."""
    row = next((r for r in sql.chunks_for_uri(st.con, uri) if r["start_line"] <= line <= r["end_line"]), None)
    if row is None:
        return None
    with db.transaction(st.con):
        sql.carry_counters(st.con, row["id"], old)
    return row["id"]
