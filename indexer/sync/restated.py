"""Which existing chunk a newly indexed chunk restates: one KNN query per chunk, or for bulk syncs one matrix."""

from __future__ import annotations

import numpy as np

from indexer.index import sql
from indexer.kept.vector_matrix import int8_codes
from indexer.notes.spaces import space_of

BULK = 32  # new texts in one batch from which one pass over all vectors beats a KNN scan per text
MARGIN = 0.01  # int8 cosines are within about 0.001 of the exact ones (0.004 at worst); candidates are re-checked exactly
CANDIDATES = 8  # nearest rows kept per new text before the exact check
BLOCK = 4096  # matrix rows compared at a time: float32 copy, cosines, their negation and argpartition's
# int64 indices come to about 24 MB per step (96 MB at 16,384 rows)
QUERY_BLOCK = 256  # new texts compared at a time: a batch of long notes can hold thousands
PROJECTED = 64  # principal directions of the prefilter (see _scan_pruned)
FIT_AT = 2048  # rows before the prefilter is worth fitting: below, one product over all rows is cheap
BOUND_SLACK = 0.005  # the bound's rounding (float16 rows) is under 0.001
# From this many rows a batch reads IVF lists (kept.vector_ann.CodeLists: 4-bit codes, 1/LIST_SHARE of the lists
# a text) instead of bounding every row: the prefilter's pass over all rows made a build quadratic
# (~0.35 s a batch at 500k rows); a restatement (cosine >= 0.85) sits in the text's own or next lists.
LISTS_AT = 100_000
LIST_CANDIDATES = 32  # rows the lists give a text; their int8 cosines then keep those near the threshold
LIST_SHARE = 128  # 8 of 1,024 lists at 1M rows: a restatement (>= 0.85) sits in the text's own list or the next
LIST_REGROW = 4  # lists are trained again once the matrix has this many times the rows they were fitted on


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


class RestatementFinder:
    """Answers "which chunk, of another note, is at least `threshold` cosine-similar to this new text".

    A KNN query scans every vector, so checking each new text of a 50,000-chunk cold build that
    way is quadratic (about 25 minutes of the build). Once a sync has enough new text, the store's
    vectors are read once into an int8 matrix (about 0.5 KB per chunk) that grows with what the sync
    adds; each batch of new texts is then compared with it in one product, and the candidates are
    confirmed against the index (row still there, exact cosine) before one is reinforced.
    """

    def __init__(self, con, threshold: float, kept=None):
        self.con, self.threshold = con, threshold
        self._kept = kept  # the serving process's kept copies (kept.KeptCopies), or None
        self._mat: np.ndarray | None = None
        self._scale = np.zeros(0, dtype=np.float32)
        self._n = 0
        self._rows = _RowNames()
        self._near: dict[str, list[tuple[float, int]]] = {}  # content hash -> (cosine, matrix row), nearest first
        self._pending: list[tuple[str, str, np.ndarray]] = []  # written in this batch, not yet in the matrix
        self._pending_mat: np.ndarray | None = None  # _pending's vectors stacked, rebuilt as it grows
        self._basis: np.ndarray | None = None  # the prefilter's directions, once fitted
        self._proj = np.zeros((0, PROJECTED + 1), dtype=np.float16)
        self._fit_n = 0
        self._lists = None  # kept.vector_ann.CodeLists over the matrix rows, from LISTS_AT rows
        self._listed = 0

    @property
    def loaded(self) -> bool:
        return self._mat is not None

    def start_batch(self, fresh: dict[str, np.ndarray]) -> None:
        """Called with a batch's new texts (hash -> vector) before its notes are written."""
        self._flush()
        self._near = {}
        if not fresh or (self._mat is None and len(fresh) < BULK):
            return  # a later batch may hold only text the store already had: nothing to compare
        if self._mat is None:
            self._load(len(next(iter(fresh.values()))))
        if self._n == 0:
            return
        hashes = list(fresh)
        q_all = _unit(np.stack([fresh[h] for h in hashes]).astype(np.float32))
        k = min(CANDIDATES, self._n)
        self._refit()
        scan = self._scan_all if self._basis is None else self._scan_pruned
        if self._n >= LISTS_AT:
            scan = self._scan_lists
        # blocks of both sides bound the extra memory, whatever the batch and store sizes
        for qi in range(0, len(hashes), QUERY_BLOCK):
            for h, near in zip(hashes[qi:qi + QUERY_BLOCK], scan(q_all[qi:qi + QUERY_BLOCK], k)):
                self._near[h] = near

    def _scan_all(self, q: np.ndarray, k: int) -> list[list[tuple[float, int]]]:
        """Each query's k nearest rows by int8 cosine, those within MARGIN of the threshold, nearest first."""
        best_sims = np.full((len(q), k), -np.inf, dtype=np.float32)
        best_rows = np.zeros((len(q), k), dtype=np.int64)
        for i in range(0, self._n, BLOCK):
            j = min(i + BLOCK, self._n)
            sims = (q @ self._mat[i:j].astype(np.float32).T) * self._scale[i:j]
            kk = min(k, sims.shape[1])
            part = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
            cand_sims = np.concatenate([best_sims, np.take_along_axis(sims, part, axis=1)], axis=1)
            cand_rows = np.concatenate([best_rows, part + i], axis=1)
            keep = np.argpartition(-cand_sims, k - 1, axis=1)[:, :k]
            best_sims = np.take_along_axis(cand_sims, keep, axis=1)
            best_rows = np.take_along_axis(cand_rows, keep, axis=1)
        floor = self.threshold - MARGIN
        return [[(sim, j) for sim, j in sorted(zip(best_sims[r].tolist(), best_rows[r].tolist()), reverse=True)
                 if sim >= floor] for r in range(len(q))]

    def _scan_pruned(self, q: np.ndarray, k: int) -> list[list[tuple[float, int]]]:
        """What _scan_all finds, computing int8 cosines only for rows whose bound can reach the floor.

        For a row x and the basis P: q.x = Pq.Px + Rq.Rx <= Pq.Px + |Rq||Rx| (R: the rest of the
        space), one product of (PROJECTED + 1)-wide rows. On a build's chunk vectors 64 principal
        directions leave 0.4% of rows to check, and the bound never drops a row that would pass.
        """
        pq = q @ self._basis.T
        qa = np.hstack([pq, np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", pq, pq), 0.0, None))[:, None]])
        floor = self.threshold - MARGIN
        found: list[list[tuple[float, int]]] = [[] for _ in range(len(q))]
        for i in range(0, self._n, BLOCK):
            j = min(i + BLOCK, self._n)
            who, rows = np.nonzero(qa @ self._proj[i:j].astype(np.float32).T >= floor - BOUND_SLACK)
            if not len(who):
                continue
            rows += i
            sims = np.einsum("ij,ij->i", q[who], self._mat[rows].astype(np.float32)) * self._scale[rows]
            for a, row, sim in zip(who.tolist(), rows.tolist(), sims.tolist()):
                if sim >= floor:
                    found[a].append((sim, row))
        return [sorted(f, reverse=True)[:k] for f in found]

    def _scan_lists(self, q: np.ndarray, k: int) -> list[list[tuple[float, int]]]:
        """What _scan_all finds, from the rows the IVF lists give each text (int8 cosines, then the floor)."""
        self._fit_lists()
        floor = self.threshold - MARGIN
        out = []
        for qi, rows in zip(q, self._lists.nearest(q, min(LIST_CANDIDATES, self._n), LIST_SHARE)):
            rows = rows[rows >= 0]
            sims = (self._mat[rows].astype(np.float32) @ qi) * self._scale[rows]
            out.append(sorted(((s, j) for s, j in zip(sims.tolist(), rows.tolist()) if s >= floor), reverse=True)[:k])
        return out

    def _fit_lists(self) -> None:
        """Train the lists on a sample of the matrix (again as it quadruples); add the rows they lack."""
        from indexer.kept.vector_ann import TRAIN_PER_LIST, CodeLists, list_count
        if self._lists is None or self._n >= LIST_REGROW * self._lists.trained:
            take = min(self._n, TRAIN_PER_LIST * list_count(self._n))
            self._lists = CodeLists(self._dequantized(np.linspace(0, self._n - 1, take).astype(np.int64)), self._n)
            self._listed = 0
            self._basis, self._proj = None, np.zeros((0, PROJECTED + 1), dtype=np.float16)  # the lists replace it
        for i in range(self._listed, self._n, BLOCK):
            self._lists.add(self._dequantized(slice(i, min(i + BLOCK, self._n))), i)
        self._listed = self._n

    def _refit(self) -> None:
        """Fit the prefilter's directions once the matrix is big enough, and again as it quadruples."""
        if self._lists is not None:
            return
        if self._n < FIT_AT or (self._basis is not None and self._n < 4 * self._fit_n):
            return
        sample = self._dequantized(np.linspace(0, self._n - 1, min(self._n, 4096)).astype(np.int64))
        _vals, vecs = np.linalg.eigh(sample.T @ sample)  # ascending: the last columns span the most energy
        self._basis = np.ascontiguousarray(vecs[:, ::-1][:, :PROJECTED].T, dtype=np.float32)
        self._fit_n = self._n
        self._proj = np.zeros((len(self._mat), PROJECTED + 1), dtype=np.float16)
        for i in range(0, self._n, BLOCK):
            self._project(i, min(i + BLOCK, self._n))

    def _dequantized(self, rows) -> np.ndarray:
        return self._mat[rows].astype(np.float32) * self._scale[rows][:, None]

    def _project(self, i: int, j: int) -> None:
        """Rows i..j as (their part along the basis, the norm of the rest): what the bound multiplies."""
        x = self._dequantized(slice(i, j))
        p = x @ self._basis.T
        rest = np.sqrt(np.clip(np.einsum("ij,ij->i", x, x) - np.einsum("ij,ij->i", p, p), 0.0, None))
        self._proj[i:j, :PROJECTED], self._proj[i:j, PROJECTED] = p, rest

    def most_similar(self, vec: np.ndarray, content_hash: str, exclude_uri: str) -> str | None:
        """The id of the chunk this new text restates, or None; its own note and other spaces never count."""
        space = space_of(exclude_uri)
        if self._mat is None:
            return self._one(vec, exclude_uri, space)
        v = _unit(np.asarray(vec, dtype=np.float32)[None, :])[0]
        best, best_sim = None, self.threshold
        for sim, j in self._near.get(content_hash, []):  # nearest first: the first that holds wins
            cid, uri = self._rows.id(j), self._rows.uri(j)
            if uri == exclude_uri or space_of(uri) != space or not sql.chunk_exists(self.con, cid):
                continue  # its own note, or a row replaced or removed since the matrix was read
            if sim < self.threshold + MARGIN:  # too close to call in int8: ask the index
                exact = sql.vector_for_id(self.con, cid)
                sim = float(v @ _unit(exact[None, :])[0]) if exact is not None else -1.0
            if sim >= self.threshold:
                best, best_sim = cid, sim
                break
        if self._pending:  # notes written earlier in this batch: one product, not one per row
            if self._pending_mat is None or len(self._pending_mat) != len(self._pending):
                self._pending_mat = np.stack([w for _c, _u, w in self._pending])
                self._pending_uris = np.array([u for _c, u, _w in self._pending], dtype=object)
                self._pending_spaces = np.array([space_of(u) or "" for _c, u, _w in self._pending], dtype=object)
            sims = self._pending_mat @ v
            sims[(self._pending_uris == exclude_uri) | (self._pending_spaces != (space or ""))] = -np.inf
            i = int(np.argmax(sims))  # the first of equals, as a scan in order would keep
            if sims[i] > best_sim or (best is None and sims[i] >= best_sim):
                best = self._pending[i][0]
        return best

    def _one(self, vec, exclude_uri: str, space: str | None) -> str | None:
        """One text's check without the matrix: the serving process's IVF lists when it keeps them (a KNN
        scan costs about 0.75 s a text at 1M vectors), else sqlite-vec's scan."""
        lists = self._kept.lists(self.con.filename) if self._kept is not None else None
        if lists is None:
            found = sql.find_similar(self.con, vec, self.threshold, k=3, exclude_uri=exclude_uri,
                                     space=(space or "") if sql.has_spaces(self.con) else None)
            return found[0]["id"] if found else None
        near = [(cid, sim) for cid, sim in lists.similar(self.con, vec, CANDIDATES * 4) if sim >= self.threshold - MARGIN]
        rows = {r["id"]: r for r in sql.chunks_by_ids(self.con, [cid for cid, _s in near])}
        v = _unit(np.asarray(vec, dtype=np.float32)[None, :])[0]
        for cid, sim in near:
            r = rows.get(cid)
            if r is None or r["uri"] == exclude_uri or space_of(r["uri"]) != space:
                continue
            exact = sql.vector_for_id(self.con, cid)
            if exact is not None and float(v @ _unit(exact[None, :])[0]) >= self.threshold:
                return cid
        return None

    def written(self, note, vectors: dict[str, np.ndarray]) -> None:
        """A note's chunks are in the index now: later notes may restate them."""
        if self._mat is None:
            return
        for ch in note.chunks:
            v = vectors.get(ch.content_hash)
            if v is not None:
                self._pending.append((ch.id, ch.uri, _unit(np.asarray(v, dtype=np.float32)[None, :])[0]))

    def _load(self, dim: int) -> None:
        self._mat = np.zeros((1024, dim), dtype=np.int8)
        self._scale = np.zeros(1024, dtype=np.float32)
        self._rows, self._n = _RowNames(), 0
        for cid, uri, vec in sql.vectors_with_uri(self.con):
            if len(vec) == dim:  # a vector of another length is verify's to report, not ours to compare
                self._pending.append((cid, uri, vec))
            if len(self._pending) >= BLOCK:
                self._flush()
        self._flush()

    def _flush(self) -> None:
        """Move what was written (or read) into the matrix, in one normalised block."""
        if self._mat is None or not self._pending:
            self._pending, self._pending_mat = [], None
            return
        need = self._n + len(self._pending)
        if need > len(self._mat):
            grown = np.zeros((2 * need, self._mat.shape[1]), dtype=np.int8)
            grown[:self._n] = self._mat[:self._n]
            self._mat = grown
            self._scale = np.concatenate([self._scale[:self._n], np.zeros(2 * need - self._n, dtype=np.float32)])
            if self._basis is not None:
                proj = np.zeros((2 * need, PROJECTED + 1), dtype=np.float16)
                proj[:self._n] = self._proj[:self._n]
                self._proj = proj
        self._mat[self._n:need], self._scale[self._n:need] = int8_codes(
            _unit(np.stack([w for _c, _u, w in self._pending]).astype(np.float32)))
        if self._basis is not None:
            self._project(self._n, need)
        self._rows.extend([(c, u) for c, u, _w in self._pending])
        self._n = need
        self._pending, self._pending_mat = [], None


class _RowNames:
    """Each matrix row's chunk id and note, compactly: ids as 16 bytes (sha256 prefixes in hex), notes as numbers
    into one list of uris. As Python strings they were about 150 bytes a row: 150 MB of a 1M-chunk build."""

    def __init__(self):
        self._ids = np.zeros(0, dtype="S16")
        self._uri_of = np.zeros(0, dtype=np.int32)
        self._n = 0
        self._uris: list[str] = []
        self._number: dict[str, int] = {}
        self._odd: dict[int, str] = {}  # an id that is not 16 ASCII characters (none that mdmem makes)

    def extend(self, rows: list[tuple[str, str]]) -> None:
        need = self._n + len(rows)
        if need > len(self._ids):
            cap = max(need, 2 * len(self._ids), 1024)
            self._ids = np.concatenate([self._ids[:self._n], np.zeros(cap - self._n, dtype="S16")])
            self._uri_of = np.concatenate([self._uri_of[:self._n], np.zeros(cap - self._n, dtype=np.int32)])
        for i, (cid, uri) in enumerate(rows, self._n):
            if len(cid) == 16 and cid.isascii():
                self._ids[i] = cid.encode("ascii")
            else:
                self._odd[i] = cid
            number = self._number.get(uri)
            if number is None:
                number = self._number[uri] = len(self._uris)
                self._uris.append(uri)
            self._uri_of[i] = number
        self._n = need

    def id(self, row: int) -> str:
        return self._odd.get(row) or self._ids[row].decode("ascii")

    def uri(self, row: int) -> str:
        return self._uris[int(self._uri_of[row])]
