"""Access counts a reader could not write (disk full, read-only, busy) are kept and written later."""

from __future__ import annotations

from collections import Counter

from indexer.errors import StoreBusyError, StoreError
from indexer.index import db
from indexer.index import sql

BUSY_WAIT_MS = 250  # a reader never waits long behind a writer for a counter
MAX_KEPT = 10_000  # chunk ids kept per store; beyond that the oldest counts are dropped

_kept: dict[str, Counter] = {}  # index file -> chunk id -> accesses not yet written
_warned: set[str] = set()  # index files whose failure was told; a long-lived process tells once


def record_accesses(stores, ids_by_store: dict[str, list[str]], warn=None) -> int:
    """Write each store's access counts (and any kept from earlier); returns how many stores could not.

    A failure never reaches the reader: the counts are kept in this process and one warning
    names the cause, once per command and once per stall in a daemon (a busy writer is ordinary
    and not worth a warning).
    """
    failed: list[StoreError] = []
    for st in stores:
        ids = ids_by_store.get(st.name)
        if not ids:
            continue
        key = str(st.index_path)
        counts = _kept.pop(key, Counter())
        counts.update(ids)
        try:
            _write(st, counts)
            _warned.discard(key)
        except StoreError as exc:
            _keep(key, counts)
            if not isinstance(exc, StoreBusyError) and key not in _warned:
                _warned.add(key)
                failed.append(exc)
    if failed and warn:
        warn(f"access counts not saved ({failed[0]}); results are unaffected and the counts are kept for later")
    return len(failed)


def kept_count(index_path) -> int:
    """Accesses waiting to be written to this index file."""
    return sum(_kept.get(str(index_path), Counter()).values())


def _write(st, counts: Counter) -> None:
    if st.readonly:
        raise db.write_refusal(st.con)
    st.con.set_busy_timeout(BUSY_WAIT_MS)
    try:
        with db.transaction(st.con):
            sql.increment_access_count(st.con, list(counts.elements()))
    finally:
        st.con.set_busy_timeout(db.BUSY_TIMEOUT_MS)


def _keep(key: str, counts: Counter) -> None:
    if len(counts) > MAX_KEPT:
        counts = Counter(dict(list(counts.items())[-MAX_KEPT:]))
    _kept[key] = counts
