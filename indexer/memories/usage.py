"""The counters of records, written to one store: accesses (a record handed out) and reinforcements."""

from __future__ import annotations

from collections import Counter

from indexer.errors import StoreBusyError, StoreError
from indexer.index import db
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import Hit

ACCESS_BUSY_MS = 250  # an access count is worth less than a search that waits on a long write
MAX_KEPT = 10_000  # records whose unwritten counts are kept per store; beyond that the oldest are dropped



def ids_by_store(hits: list[Hit]) -> dict[str, list[str]]:
    """The returned records of each store, in the order they were returned."""
    out: dict[str, list[str]] = {}
    for h in hits:
        out.setdefault(h.store, []).append(h.id)
    return out


def count_access(st: Store, ids: list[str]) -> StoreError | None:
    """Count each returned record, with the counts kept from earlier failures.

    A busy writer, a full disk or a read-only store never fails the caller: the counts are kept
    on the store for the next count that succeeds. Returns the error worth telling the user,
    once per store until writing works again (a busy writer is ordinary and never told).
    """
    if not ids:
        return None
    counts, st.unwritten = st.unwritten, Counter()
    counts.update(ids)
    try:
        if st.readonly:
            raise db.write_refusal(st.con)
        st.con.set_busy_timeout(ACCESS_BUSY_MS)
        try:
            with db.transaction(st.con):
                sql.increment_access_count(st.con, list(counts.elements()))
        finally:
            st.con.set_busy_timeout(db.BUSY_TIMEOUT_MS)
    except StoreError as exc:
        st.unwritten = counts if len(counts) <= MAX_KEPT else Counter(dict(list(counts.items())[-MAX_KEPT:]))
        if isinstance(exc, StoreBusyError) or st.failure_told:
            return None
        st.failure_told = True
        return exc
    st.failure_told = False
    return None


def tell_once(failures, warn) -> None:
    """One warning for all the stores whose counts could not be written (not one per store or hit)."""
    failed = [f for f in failures if f is not None]
    if failed and warn:
        warn(f"access counts not saved ({failed[0]}); results are unaffected and the counts are kept for later")


def reinforce(st: Store, chunk_id: str, by: float = 1.0) -> float | None:
    """One more restatement of a record (by -1: one taken back); its new reinforcement (None when it is gone)."""
    with db.transaction(st.con):
        sql.increment_reinforcement(st.con, [chunk_id], by)
    fresh = sql.chunks_by_ids(st.con, [chunk_id])
    return fresh[0]["reinforcement"] if fresh else None


def carry(st: Store, uri: str, line: int, old: dict) -> str | None:
    """The record now holding `line` of a just-edited note takes over an old record's counters; its id."""
    row = next((r for r in sql.chunks_for_uri(st.con, uri) if r["start_line"] <= line <= r["end_line"]), None)
    if row is None:
        return None
    with db.transaction(st.con):
        sql.carry_counters(st.con, row["id"], old)
        sql.add_alias(st.con, old["id"], row["id"])
    return row["id"]
