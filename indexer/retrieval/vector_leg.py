"""The vector side of a query: its embedding and each store's nearest rows, started beside the full-text side.

In a process that keeps vector matrices (the daemon), embedding the query, shortlisting each
matrix and settling the close cosines (on the matrix's own read-only connection) run in a second
thread while the first runs the full-text searches: SQLite lets go of the GIL while it scores rows,
so on two cores the two sides overlap. Reading the chunk rows is left to the caller's thread and
connection, as a connection is used by one thread at a time.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from indexer.index import sql
from indexer.index.stores import Store
from indexer.kept.shortlist import unit

_AHEAD = ThreadPoolExecutor(max_workers=4, thread_name_prefix="vector-leg")
# a filter (time window, space, folder) letting this many rows through or fewer is scored from the kept copy:
# sqlite-vec joins its table row by row (about 0.1 ms a row), the copy gives thousands of cosines in a few ms
FILTERED_ROWS = 50_000
# a wider filter reads the copy's nearest rows for WIDE_FIRST x pool of them, then four times as many, until the
# pool of them pass: it lets through 1/20 of a 1M store or more, so 8 x 50 rows hold ~20 of its rows on average
WIDE_FIRST = 8
WIDE_GROWTH = 4


class VectorLeg:
    """The query vector and, for stores with a kept matrix, their shortlists (ready once `vector` is read)."""

    def __init__(self, stores: list[Store], embedder, text: str, pool: int, matrix_ok: dict[str, bool],
                 settle_at: int | None = None, made: dict | None = None):
        self._pool, self._settle_at = pool, settle_at
        self._made = {} if made is None else made  # text -> its vector, from a run of the same search before
        self._matrices = {st.name: m for st in stores
                          if matrix_ok.get(st.name) and (m := refreshed(st)) is not None}
        self._future: Future | None = None
        self._vector: np.ndarray | None = None
        self._shortlists: dict = {}
        if self._matrices:
            self._future = _AHEAD.submit(self._ahead, embedder, text)
        else:
            self._vector = self._embed(embedder, text)

    def _embed(self, embedder, text: str) -> np.ndarray:
        if ("vector", text) not in self._made:
            self._made["vector", text] = embedder.embed_query(text)
        return self._made["vector", text]

    def _ahead(self, embedder, text: str):
        qvec = self._embed(embedder, text)
        done = {}
        for name, m in self._matrices.items():
            found = m.shortlist(qvec, self._pool, self._settle_at)
            done[name] = (found, m.finish_apart(found))
        return qvec, done

    @property
    def vector(self) -> np.ndarray:
        if self._future is not None:
            self._vector, self._shortlists = self._future.result()
            self._future = None
        return self._vector

    def nearest(self, st: Store, q, space: str | None) -> tuple[list[dict], bool]:
        """(rows with `similarity`, nearest first; whether they came from the kept matrix). With a filter
        (space, folder, dates) the rows it lets through get their cosines from the kept copy when they are
        few enough; otherwise, or without a kept copy, sqlite-vec's scan."""
        qvec = self.vector
        if st.name in self._matrices:
            found, nearest = self._shortlists[st.name]
            if nearest is None:
                nearest = self._matrices[st.name].finish(st.con, found)
            return rows_of(st, nearest), True
        kept = refreshed(st)
        if kept is not None:
            filters = dict(under=q.under, space=space, since=q.since, until=q.until)
            if kept.keeps_filters and q.since is None and q.until is None:  # a folder or space: its rows are kept
                best = kept.nearest_within(("within", tuple(q.under or ()), space), qvec, self._pool,
                                           lambda: self._through(st, filters))
                return rows_of(st, best if best is not None else self._nearest_passing(st, kept, qvec, q, space)), True
            # counted first on the filters' indexes: joining each row to its vector's rowid costs 3.4 us a row,
            # 170 ms for a wide filter's first 50,000 rows that the wide path does not need
            found = self._through(st, filters)
            if found is not None:
                sims = kept.cosines(st.con, qvec, list(found), refresh=False, rowids=found)
                best = sorted(sims.items(), key=lambda p: (-p[1], p[0]))[:self._pool]
            else:
                best = self._nearest_passing(st, kept, qvec, q, space)
            return rows_of(st, best), True
        return sql.vector_search(st.con, qvec, self._pool, under=q.under, space=space,
                                 since=q.since, until=q.until), False

    @staticmethod
    def _through(st: Store, filters: dict) -> dict[str, int] | None:
        """The ids (with vec0 rowids) the filters let through, or None when they let more than FILTERED_ROWS."""
        if sql.count_where(st.con, FILTERED_ROWS + 1, **filters) > FILTERED_ROWS:
            return None
        return sql.vec_rowids_where(st.con, FILTERED_ROWS + 1, **filters)

    def _nearest_passing(self, st: Store, kept, qvec, q, space: str | None) -> list[tuple[str, float]]:
        """The pool's nearest rows among those a wide filter lets through: the copy's nearest rows of the
        whole store, read further until the pool of them pass. Rows it skips are farther than every row
        read, so the rows found are the filter's nearest (sqlite-vec joined row by row took 14 s at 1M).
        Fewer than the pool only when the copy has no more to give (its shortlist, or every row)."""
        want = self._pool * WIDE_FIRST
        while True:
            near = kept.search(st.con, qvec, want)
            through = sql.ids_passing(st.con, [cid for cid, _s in near], under=q.under, space=space,
                                      since=q.since, until=q.until)
            got = [(cid, sim) for cid, sim in near if cid in through]
            if len(got) >= self._pool or len(near) < want or want >= kept.rows:
                return got[:self._pool]
            want *= WIDE_GROWTH


def refreshed(st: Store):
    """The store's kept vectors in step with it, or None when its process keeps none (or not yet)."""
    return st.kept.refreshed(st) if st.kept is not None else None


def rows_of(st: Store, found: list[tuple[str, float]]) -> list[dict]:
    """The chunk rows of (id, cosine) pairs, with `similarity`, in their order (rows gone since are left out)."""
    by_id = {r["id"]: r for r in sql.chunks_by_ids(st.con, [cid for cid, _s in found])}
    return [{**by_id[cid], "similarity": sim} for cid, sim in found if cid in by_id]


def cosines(st: Store, qvec: np.ndarray, ids: list[str], refresh: bool = True) -> dict[str, float]:
    """Cosines of the query with these chunks: from the kept vectors when there are some, else read from sqlite-vec."""
    kept = st.kept.vectors(st) if st.kept is not None else None
    if kept is not None and not kept.warming:
        return kept.cosines(st.con, qvec, ids, refresh)
    q = unit(qvec)
    return {cid: float(v @ q) for cid, v in sql.vectors_for_ids(st.con, ids).items()}
