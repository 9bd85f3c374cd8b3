"""A kept copy's background work (reading, making, saving it): one job at a time, in a thread, on the copy's
own read-only connection to the index, so searches go on answering from what is there meanwhile."""

from __future__ import annotations

import threading
import time

from indexer.index import db


class KeptJob:
    """The one background job of a copy kept beside an index file (IVF lists, common words)."""

    def __init__(self, path: str, name: str, errors: tuple[type[BaseException], ...]):
        self._path, self._name, self._errors = path, name, errors
        self.busy = False  # a thread is reading, making or saving the copy
        self.failed = False  # it could not be made: callers keep asking sqlite-vec or FTS5

    def start(self, job, gave_up) -> None:
        """Run job(connection) in a thread unless one runs or the copy could not be made; on one of the errors,
        gave_up() says whether that is for good (no copy in memory to go on answering from)."""
        if self.busy or self.failed:
            return
        self.busy = True

        def run():
            try:
                con = db.connect(self._path, readonly=True)
                try:
                    job(con)
                finally:
                    con.close()
            except self._errors:
                self.failed = gave_up()
            finally:
                self.busy = False
        threading.Thread(target=run, name=self._name, daemon=True).start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the job is done (tests and benchmarks)."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.busy and (end is None or time.monotonic() < end):
            time.sleep(0.01)
