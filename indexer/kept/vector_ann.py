"""A big store's vectors in faiss IVF lists of 8-bit codes, saved beside the index file: KNN at a million rows."""

from __future__ import annotations

import contextlib
import glob
import json
import os

import faiss
import numpy as np

from indexer.errors import MdmemError
from indexer.index import db
from indexer.index import sql
from indexer.private_files import create_private
from indexer.kept.copy import KeptCopy
from indexer.kept.job import KeptJob
from indexer.kept.shortlist import Shortlist, unit as _unit

EXTRA = 16  # faiss returns k + EXTRA rows: the close ones around the k-th are settled on exact cosines
TIE = 0.004  # 8-bit codes (per-dimension ranges) give cosines within about 0.002 of float32's
# at most this many rows nearest the caller's last place get their exact cosine (a sqlite-vec read, 0.5 ms each at
# 1M rows): at 1M about 11 rows lie within TIE of the 10th; settling the 4 nearest already gave recall@10 1.0
# (60 questions), none 0.987 (lowest 0.9), all of them cost 6.8 ms a query; 6 keeps a margin (3.4 ms)
MAX_SETTLE = 6
TRAIN_PER_LIST = 40  # training rows per list (faiss warns below 39)
TRAIN_ITERATIONS = 10
SAVE_CHANGES = 20_000  # rows added or removed since the file was written before it is written again
REGROW = 4  # lists are trained again (in the background) once the store has this many times the rows they were fitted on
SAMPLE = 16  # (rowid, id) pairs kept to tell the same index file grown from one made again by rebuild
LEAF = 512  # rowid ranges this small are listed instead of halved when looking for removed vectors
VERSION = 2  # 2: four times as many lists, 1/16 read (a file of version 1 is made again)


def list_count(rows: int, per_root: int = 1) -> int:
    """About per_root x sqrt(rows) lists, a power of two from 64 to 8,192."""
    want = int(per_root * np.sqrt(max(rows, 1)))
    return int(min(8192, max(64, 1 << max(0, want.bit_length() - 1))))


# A search's lists: four times sqrt(rows) of them, 1/16 read. Over the 60 perf questions (recall@10 against
# sqlite-vec, in-process search at 1M): 512 lists reading 1/8 gave 1.0 in 10.7 / 12.6 ms (p50 / p95), 1/12 of
# them 0.983 with one question at 0.0; 2,048 lists reading 1/16 gave 1.0 (lowest 1.0) in 7.1 / 8.1 ms, 1/32
# still 1.0. At 100k, 1,024 lists gave 1.0 at every share from 1/8 to 1/32, 512 lists 0.992 (lowest 0.7) at 1/8.
SEARCH_LISTS_PER_ROOT = 4
PROBE_SHARE = 16
MIN_PROBES = 16  # a small store's 64-128 lists: still 1/8 of them or more


def probes(nlist: int) -> int:
    """Lists read per query: 1/16 of them, 16 at least."""
    return max(MIN_PROBES, nlist // PROBE_SHARE)


def _one_thread() -> None:
    """One OpenMP thread for this calling thread's faiss calls (the setting is per thread, so every query
    thread sets it): one query per call gains nothing from a team, and a thread left at the default paid
    ~19 ms for reconstructing 416 codes against 0.7 ms (1M rows; a time window's filtered search)."""
    faiss.omp_set_num_threads(1)


def _units(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


class AnnVectors(KeptCopy):
    """faiss IVF-SQ8 over one store's vectors, keyed by vec0's rowid (never reused), with sqlite-vec the only truth.

    The lists live in memory (512 bytes and an 8-byte key a 512-d vector) and on disk in `<index>.ann`
    with `<index>.ann.npz` (rowids held, the store's signature then, a sample of rowid -> id): a daemon
    starting on a big store reads them in about a second instead of the 22 s its 1M vectors take
    from vec0, then adds what was written since. With no usable file the lists are built in a
    background thread and saved; until then `ready` is false and callers scan sqlite-vec. Every
    writer is followed from the store itself: rowids past the last one seen are new, and a count that
    differs finds the removed ones by halving rowid ranges (counts on vec0's rowid key).
    """

    kind = "lists"

    def __init__(self, path: str):
        super().__init__(path)
        self._file = path + ".ann"
        self._own: object | None = None
        self._jobs = KeptJob(path, "ann-lists", (MdmemError, RuntimeError, OSError, ValueError))
        self._generation = 0
        self._install(None, np.zeros(0, np.int64), None, 0, [], 0)

    def _install(self, index, rowids, sig, trained: int, sample: list, changed: int = 0, vseq: int | None = None) -> None:
        self._index, self._rowids, self._sig = index, rowids, sig
        self._vseq = vseq  # the last vector removal the lists have seen (None: find removals by counting)
        self._top = int(sig[0]) if sig else 0
        self._trained, self._sample, self._changed = trained, sample, changed
        self._generation += 1

    @property
    def ready(self) -> bool:
        return self._index is not None

    @property
    def rows(self) -> int:
        return len(self._rowids)

    def nbytes(self) -> int:
        if self._index is None:
            return 0
        return int(self._index.ntotal * (self._index.code_size + 8) + self._index.nlist * self._index.d * 4
                   + self._rowids.nbytes)

    def drop(self) -> None:
        with self.lock:
            self._install(None, np.zeros(0, np.int64), None, 0, [], 0)
            self._own = None

    # --- following the store -------------------------------------------------------------------------------

    def refresh(self, con) -> None:
        """Bring the lists in step with what was committed (the caller holds `lock`); start them when cold."""
        _one_thread()
        if self._index is None:
            self._start(self._prepare)
            return
        sig = sql.vector_signature(con)
        if sig == self._sig:
            return
        if not self._same_file(con, sig):
            # a rebuild swapped the file in: exact scans until the new lists are made
            self._install(None, np.zeros(0, np.int64), None, 0, [], 0)
            self._start(self._prepare)
            return
        self._catch_up(con, sig)
        if self._changed >= SAVE_CHANGES or self.rows > REGROW * self._trained:
            self._start(self._renew)  # answers go on from these lists meanwhile

    def _same_file(self, con, sig) -> bool:
        if sig[0] < self._top:
            return False
        held = dict(self._sample)
        found = sql.ids_for_rowids(con, list(held))
        return bool(found) and all(held[r] == cid for r, cid in found.items())

    def _catch_up(self, con, sig) -> None:
        seq = sql.removal_seq(con, "vec")
        if self._vseq is not None:  # the removal log names what went since the last look
            logged, whole = sql.removals_since(con, self._vseq, seq, "vec")
            if whole:
                self._drop(np.array(logged, dtype=np.int64))
        new = [(rid, v) for rid, _cid, v in sql.vectors_after(con, self._top) if len(v) == self._index.d]
        if new:
            rids = np.array([r for r, _v in new], dtype=np.int64)
            self._index.add_with_ids(_units(np.stack([v for _r, v in new])), rids)
            self._rowids = np.concatenate([self._rowids, rids])
        self._top, self._changed = max(self._top, int(sig[0])), self._changed + len(new)
        if self.rows != sig[1]:  # a file of an older version (no log), or a removal not logged: find them
            self._drop(self._removed(con))
        self._sig, self._vseq = sig, seq
        self._generation += 1

    def _drop(self, gone: np.ndarray) -> None:
        gone = gone[np.isin(gone, self._rowids)]
        if len(gone):
            gone = np.ascontiguousarray(gone, dtype=np.int64)  # the hashtable map removes only listed ids
            self._index.remove_ids(faiss.IDSelectorArray(len(gone), faiss.swig_ptr(gone)))
            self._rowids = self._rowids[~np.isin(self._rowids, gone)]
            self._changed += len(gone)

    def _removed(self, con) -> np.ndarray:
        """Rowids held here that the store no longer has: ranges whose count agrees are skipped whole."""
        held, gone = self._rowids, []
        todo = [(0, len(held))]
        while todo:
            i, j = todo.pop()
            if i >= j:
                continue
            lo, hi = int(held[i]), int(held[j - 1])
            theirs = sql.vector_count_between(con, lo, hi)
            if theirs >= j - i:
                continue
            if theirs == 0:
                gone.append(held[i:j])
            elif j - i <= LEAF:
                gone.append(np.setdiff1d(held[i:j], np.array(sql.vector_rowids_between(con, lo, hi), dtype=np.int64)))
            else:
                todo += [(i, (i + j) // 2), ((i + j) // 2, j)]
        return np.concatenate(gone) if gone else np.zeros(0, np.int64)

    # --- making, saving and reading the lists ---------------------------------------------------------------

    def _prepare(self, con) -> None:
        """Read the saved lists, or build and save them."""
        if not self._read(con):
            built = self._build(con)
            with self.lock:
                self._install(*built[:5], changed=0, vseq=built[5])
            self._write()

    def _renew(self, con) -> None:
        """Save the lists, or train them again first when the store has outgrown them."""
        if self.rows > REGROW * self._trained:
            built = self._build(con)
            with self.lock:  # rows written since the build's snapshot come in at the next refresh
                self._install(*built[:5], changed=0, vseq=built[5])
        self._write()

    def _build(self, con) -> tuple:
        """Train lists on a sample and add every vector, both read in one snapshot of the store."""
        with db.read_snapshot(con):
            sig, vseq = sql.vector_signature(con), sql.removal_seq(con, "vec")
            count = max(1, sig[1])
            nlist = list_count(count, SEARCH_LISTS_PER_ROOT)
            every = max(1, count // (nlist * TRAIN_PER_LIST))
            sample = [v for i, (_r, _c, v) in enumerate(sql.all_vectors_with_rowid(con)) if i % every == 0]
            if not sample:
                raise ValueError("no vectors to index")
            dim = len(sample[0])
            index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, min(nlist, len(sample)),
                                                  faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
            index.cp.niter = TRAIN_ITERATIONS
            index.train(_units(np.stack([v for v in sample if len(v) == dim])))
            index.set_direct_map_type(faiss.DirectMap.Hashtable)  # cosines of given rows, and removals
            rowids, block = [], []
            for rid, _cid, v in sql.all_vectors_with_rowid(con):
                if len(v) == dim:
                    block.append((rid, v))
                if len(block) == 8192:
                    rowids.append(self._add_block(index, block))
            rowids.append(self._add_block(index, block))
            held = np.sort(np.concatenate(rowids))
            picks = held[np.linspace(0, len(held) - 1, min(SAMPLE, len(held))).astype(int)].tolist()
            sample = sorted(sql.ids_for_rowids(con, picks).items())
        return index, held, sig, len(held), sample, vseq

    @staticmethod
    def _add_block(index, block: list) -> np.ndarray:
        if not block:
            return np.zeros(0, np.int64)
        rids = np.array([r for r, _v in block], dtype=np.int64)
        index.add_with_ids(_units(np.stack([v for _r, v in block])), rids)
        block.clear()
        return rids

    def _write(self) -> None:
        """Write the lists and their sidecar beside the index file; the sidecar goes last and names the file's size."""
        for left in glob.glob(glob.escape(self._file) + ".*.tmp") + glob.glob(glob.escape(self._file) + ".*.npz"):
            with contextlib.suppress(OSError):
                os.remove(left)  # a write cut short by a kill: half a file, named by the process that died
        with self.lock:
            index, rowids, sig, sample, trained = self._index, self._rowids.copy(), self._sig, self._sample, self._trained
            vseq = self._vseq
            tmp = f"{self._file}.{os.getpid()}.tmp"
            create_private(tmp)  # codes of private memories: the index file's own mode, from the first byte
            faiss.write_index(index, tmp)  # under the lock: a refresh would change the lists being written
            self._changed = 0
        meta = {"version": VERSION, "sig": list(sig[:2]), "trained": trained, "bytes": os.path.getsize(tmp),
                "sample": sample, "vseq": vseq}
        side = f"{self._file}.{os.getpid()}.npz"
        create_private(side)
        np.savez(side, rowids=rowids, meta=np.array(json.dumps(meta)))
        os.replace(tmp, self._file)
        os.replace(side, self._file + ".npz")

    def _read(self, con) -> bool:
        """Lists from the files beside the index when they are of this file (then caught up); False otherwise."""
        try:
            with np.load(self._file + ".npz") as side:
                meta, rowids = json.loads(str(side["meta"])), side["rowids"]
            if meta.get("version") != VERSION or os.path.getsize(self._file) != meta["bytes"]:
                return False
            index = faiss.read_index(self._file)
        except (OSError, ValueError, KeyError, RuntimeError):
            return False
        sig = (int(meta["sig"][0]), int(meta["sig"][1]), None, None)
        with self.lock:
            self._install(index, rowids, sig, int(meta["trained"]), [tuple(p) for p in meta["sample"]], 0,
                          meta.get("vseq"))
            now = sql.vector_signature(con)
            if not self._same_file(con, now) or not self._sample:
                self._install(None, np.zeros(0, np.int64), None, 0, [], 0)
                return False
            self._catch_up(con, now)
        return True

    # --- searching ------------------------------------------------------------------------------------------

    def search(self, con, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """(id, cosine) of the k nearest vectors, nearest first ([] while the lists are not ready)."""
        with self.lock:
            self.refresh(con)
        return self.finish(con, self.shortlist(qvec, k))

    def shortlist(self, qvec: np.ndarray, k: int, settle_at: int | None = None) -> Shortlist | None:
        with self.lock:
            if self._index is None or not self.rows or k <= 0:
                return None
            q = _unit(qvec)
            _one_thread()
            self._index.nprobe = probes(self._index.nlist)
            sims, rows = self._index.search(q[None, :], min(self.rows, k + EXTRA))
            keep = rows[0] >= 0
            return Shortlist(self._generation, q, k, rows[0][keep], sims[0][keep], settle_at)

    def finish(self, con, found: Shortlist | None) -> list[tuple[str, float]]:
        """(id, cosine) of the k nearest, nearest first: rows too close to the k-th to tell get their exact cosine."""
        if found is None or not len(found.rows):
            return []
        ids = sql.ids_for_rowids(con, found.rows.tolist())  # rows removed since the shortlist drop out here
        keep = np.array([int(r) in ids for r in found.rows], dtype=bool)
        rows, sims = found.rows[keep], found.sims[keep].astype(np.float32)
        k = min(found.k, len(rows))
        at = min(found.settle, len(rows))
        if at < len(rows):
            kth = float(np.partition(-sims, at - 1)[at - 1]) * -1
            close = np.flatnonzero(np.abs(sims - kth) <= TIE)
            close = close[np.argsort(np.abs(sims[close] - kth), kind="stable")[:MAX_SETTLE]]
            exact = sql.vectors_for_ids(con, [ids[int(rows[i])] for i in close.tolist()])
            for i in close.tolist():
                v = exact.get(ids[int(rows[i])])
                if v is not None and len(v) == len(found.q):
                    sims[i] = float(_unit(v) @ found.q)
        order = np.lexsort((rows, -sims))[:k]  # equal cosines go to the older vector, as sqlite-vec's scan
        return [(ids[int(rows[i])], float(sims[i])) for i in order.tolist()]

    def similar(self, con, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Up to k (id, cosine) near the vector, for a writer: the lists as last refreshed (never from a
        writer's transaction, whose rows may roll back) and every vector written since, read exactly."""
        with self.lock:
            top = self._top
        q = _unit(qvec)
        found = self.finish(con, self.shortlist(q, k))
        newer = [(cid, float(_unit(v) @ q)) for _r, cid, v in sql.vectors_after(con, top) if len(v) == len(q)]
        return sorted(found + newer, key=lambda p: -p[1])[:k]

    def finish_apart(self, found: Shortlist | None) -> list[tuple[str, float]] | None:
        """finish() on this index's own read-only connection, for a thread that holds no store connection."""
        with self.lock:
            if self._own is None:
                try:
                    self._own = db.connect(self._path, readonly=True)
                except MdmemError:
                    return None
            own = self._own
        return self.finish(own, found)

    def cosines(self, con, qvec: np.ndarray, ids: list[str], refresh: bool = True,
                rowids: dict[str, int] | None = None) -> dict[str, float]:
        """Cosine of the query with each of these chunks, from their 8-bit codes (exact from vec0 when not ready);
        rowids: each id's vec0 rowid when the caller read them already."""
        with self.lock:
            if refresh:
                self.refresh(con)
            q = _unit(qvec)
            if self._index is None:
                return {cid: float(_unit(v) @ q) for cid, v in sql.vectors_for_ids(con, ids).items()}
            found = rowids if rowids is not None else sql.rowids_for_ids(con, ids)
            _one_thread()
            try:  # one call for all of them (a filtered search asks for thousands)
                codes = self._index.reconstruct_batch(np.fromiter(found.values(), dtype=np.int64, count=len(found)))
                return {cid: float(s) for cid, s in zip(found, (codes @ q).tolist())}
            except RuntimeError:
                pass  # one was written after the last refresh: row by row, that one exactly
            out = {}
            for cid, rid in found.items():
                try:
                    out[cid] = float(self._index.reconstruct(int(rid)) @ q)
                except RuntimeError:
                    exact = sql.vector_for_id(con, cid)
                    if exact is not None and len(exact) == len(q):
                        out[cid] = float(_unit(exact) @ q)
            return out


class CodeLists:
    """IVF lists of 4-bit codes over rows named by number, trained on a sample: a first stage that reads
    a few lists per query instead of every row (the restatement check of a big build)."""

    def __init__(self, sample: np.ndarray, rows: int):
        sample = _units(sample)
        dim = sample.shape[1]
        self.nlist = min(list_count(rows), max(1, len(sample) // TRAIN_PER_LIST))
        self._index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, self.nlist,
                                                    faiss.ScalarQuantizer.QT_4bit, faiss.METRIC_INNER_PRODUCT)
        self._index.cp.niter = TRAIN_ITERATIONS
        self._index.train(sample)
        self.trained = rows

    def add(self, vectors: np.ndarray, first_row: int) -> None:
        """Rows first_row, first_row + 1, ... in order."""
        ids = np.arange(first_row, first_row + len(vectors), dtype=np.int64)
        self._index.add_with_ids(_units(vectors), ids)

    def nearest(self, q: np.ndarray, k: int, share: int) -> np.ndarray:
        """Each query's k best rows by 4-bit cosine (-1 where fewer), reading 1/share of the lists."""
        self._index.nprobe = max(4, self.nlist // share)
        _sims, rows = self._index.search(_units(q), k)
        return rows
