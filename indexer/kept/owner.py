"""The owner of the copies a process keeps beside its stores' index files; searches ask it for one."""

from __future__ import annotations

import os
import threading
import time

from indexer.embedder import one_blas_thread
from indexer.errors import MdmemError
from indexer.index import db
from indexer.index import sql
from indexer.kept.copy import KeptCopy
from indexer.kept.vector_matrix import VectorMatrix
from indexer.kept.word_postings import MIN_ROWS, WordPostings

ANN_ROWS = 200_000  # from this many vectors a store's vectors are kept as IVF lists (vector_ann) instead


class KeptCopies:
    """One copy of each store's vectors (an int8 matrix, or IVF lists from ANN_ROWS vectors) and, for stores of
    MIN_ROWS chunks, of its common words, keyed by the index file's real path, so every connection of the
    process to one file shares them.

    A serving process keeps them (`keep=True`): the daemon makes one and hands it to its writers' and readers'
    stores. A one-shot command keeps none (reading 100k vectors costs more than one sqlite-vec scan): an
    in-process Memory makes one that keeps nothing, and every question goes to sqlite-vec and FTS5.
    """

    def __init__(self, keep: bool = False):
        self.keeping = keep
        self._lock = threading.Lock()
        self._vectors: dict[str, KeptCopy] = {}
        self._words: dict[str, WordPostings] = {}
        self._real: dict[str, str] = {}  # a store's index path as given -> its real path (see _key)
        if keep:
            one_blas_thread()  # the matrix's products: one thread each, beside the questions' other work

    def vectors_at(self, path, con=None) -> KeptCopy | None:
        """The kept vectors of the index file at path (made on first ask: counted on con, from ANN_ROWS vectors
        IVF lists, else the matrix), or None when this process keeps none. A store that grows past ANN_ROWS
        while served keeps its matrix until the process starts again."""
        if not self.keeping:
            return None
        key = self._key(path)
        with self._lock:
            if key not in self._vectors:
                if con is not None and sql.vector_signature(con)[1] >= ANN_ROWS:
                    from indexer.kept.vector_ann import AnnVectors  # faiss: loaded by serving processes only
                    self._vectors[key] = AnnVectors(key)
                else:
                    self._vectors[key] = VectorMatrix(key)
            return self._vectors[key]

    def vectors(self, st) -> KeptCopy | None:
        """The store's kept vectors (None for a store without vectors, or when none are kept)."""
        return self.vectors_at(st.index_path, st.con) if st.with_vec else None

    def lists(self, path):
        """The IVF lists kept for the index file at path when they answer (none are made here), else None."""
        key = self._key(path)
        with self._lock:  # as every other reader: drop() and vectors_at() change the dict under it
            found = self._vectors.get(key) if self.keeping else None
        return found if found is not None and found.kind == "lists" and found.ready else None

    def words(self, st) -> WordPostings | None:
        """The store's kept common words (made the first time a store of MIN_ROWS chunks asks), or None."""
        if not self.keeping:
            return None
        key = self._key(st.index_path)
        with self._lock:
            if key not in self._words:
                if sql.chunk_count(st.con) < MIN_ROWS:
                    return None  # counted again next time: a store that grows past it gets them then
                self._words[key] = WordPostings(key)
            return self._words[key]

    def _key(self, path) -> str:
        """The index file's real path, resolved once per path: a search asks 3-4 times per store, and resolving
        (an lstat per folder) took 8 ms of a ~96 ms search at 10,000 memories on a loaded 2-core machine. A
        store's folders do not move under a serving daemon; a file swapped in by rebuild keeps its path."""
        given = os.fspath(path)
        real = self._real.get(given)
        if real is None:
            real = self._real[given] = os.path.realpath(given)
        return real

    def refreshed(self, st) -> KeptCopy | None:
        """The store's kept vectors brought in step with the store, or None when none are kept or they are still
        being read or built (sqlite-vec's scan answers meanwhile)."""
        found = self.vectors(st)
        if found is None or found.warming:
            return None
        with found.lock:
            found.refresh(st.con)
        return found if found.ready else None

    def state(self, path) -> dict[str, str | None]:
        """What is kept for the index file at path, as `status` says it: kept_vectors ("matrix", "lists" or
        "loading") and kept_words ("words" or "loading"); None where nothing is kept."""
        key = self._key(path) if path and self.keeping else None
        with self._lock:  # copied under it: a drop() between `in` and the read would raise KeyError
            found = {name: held.get(key) for name, held in (("kept_vectors", self._vectors), ("kept_words", self._words))}
        return {name: (kept.state() if kept is not None else None) for name, kept in found.items()}

    def warm(self, stores) -> None:
        """Start reading each store's copies, so the first questions need not wait: a matrix in a thread on its own
        connection (6 s at 100k vectors on a loaded 2-core machine), IVF lists and common words in their
        background jobs; until then searches ask sqlite-vec and FTS5."""
        for st in stores:
            found = self.vectors(st)
            if isinstance(found, VectorMatrix) and found.cold:
                found.warming = True
                threading.Thread(target=_read_apart, args=(found, st.index_path), name="matrix-warm",
                                 daemon=True).start()
            elif found is not None:
                self.refreshed(st)
            words = self.words(st)
            if words is not None and not words.ready:
                with words.lock:
                    words.refresh(st.con)

    def ready(self, st, timeout: float = 600.0) -> bool:
        """Wait until the store's kept vectors answer (benchmarks and tests); False when none are kept."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.refreshed(st) is not None:
                return True
            time.sleep(0.02)
        return False

    def nbytes(self) -> int:
        """The memory every kept copy holds."""
        with self._lock:
            held = list(self._vectors.values()) + list(self._words.values())
        return sum(c.nbytes() for c in held)

    def drop(self) -> None:
        """Let go of every copy and keep none from now on (a process that no longer serves)."""
        with self._lock:
            self.keeping = False
            held = list(self._vectors.values()) + list(self._words.values())
            self._vectors.clear()
            self._words.clear()
        for c in held:
            c.drop()


def _read_apart(matrix: VectorMatrix, path) -> None:
    try:
        con = db.connect(path, readonly=True)
        try:
            with matrix.lock:
                matrix.refresh(con)
        finally:
            con.close()
    except MdmemError:
        pass  # the first search reads it on its own connection instead
    finally:
        matrix.warming = False
