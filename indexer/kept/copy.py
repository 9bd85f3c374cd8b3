"""What every kept copy does: built from its index file, refreshed from what writers committed, measured, dropped."""

from __future__ import annotations

import threading

from indexer.kept.job import KeptJob


class KeptCopy:
    """One copy of a store's index kept in memory beside the file (an int8 matrix, IVF lists, common words).

    Built from the file (read at the first refresh, or read or made by a background job, `loading` meanwhile),
    refreshed before it answers from what writers committed since (writers never tell it), measured by
    nbytes(), dropped when its process stops serving. The file stays the only truth: a copy that cannot
    answer leaves the search to sqlite-vec or FTS5.
    """

    kind = ""  # what a status calls it once it answers: "matrix", "lists", "words"
    keeps_filters = False  # nearest_within keeps a filter's rows between queries

    def __init__(self, path: str):
        self._path = path
        self.lock = threading.Lock()  # held to refresh the copy or read it
        self.warming = False  # being read in a thread of its own (the matrix): callers scan the file meanwhile
        self._jobs: KeptJob | None = None  # a copy read or made in the background: its one job at a time

    @property
    def ready(self) -> bool:
        """The copy answers (a copy made in the background does once it is made)."""
        return True

    @property
    def loading(self) -> bool:
        return self.warming or not self.ready

    def state(self) -> str:
        """What a status says of it: its kind once it answers, else "loading"."""
        return "loading" if self.loading else self.kind

    def nearest_within(self, key, qvec, k: int, load) -> list[tuple[str, float]] | None:
        """(id, cosine) of the k nearest among the rows a filter lets through, the filter's rows kept between
        queries (key names the filter; load() reads its {id: vec0 rowid}, or None when it lets too many through:
        then None). Only copies whose keeps_filters is true answer it."""
        raise NotImplementedError

    def refresh(self, con):
        """Bring the copy in step with what is committed on con (the caller holds `lock`)."""
        raise NotImplementedError

    def nbytes(self) -> int:
        """The memory the copy holds (a file mapped into memory counts only for what was copied out of it)."""
        raise NotImplementedError

    def drop(self) -> None:
        """Let go of what the copy holds; the owner forgets it after (a background job still running makes
        a copy nobody asks again)."""
        raise NotImplementedError

    def _start(self, job) -> None:
        """Run job(connection) in the background unless one runs already (the caller holds `lock`); when it
        fails, a copy already in memory goes on answering."""
        self._jobs.start(job, lambda: not self.ready)

    def wait(self, timeout: float | None = None) -> bool:
        """Until a background read, build or save is done (tests and benchmarks); True when the copy answers."""
        if self._jobs is not None:
            self._jobs.wait(timeout)
        return self.ready
