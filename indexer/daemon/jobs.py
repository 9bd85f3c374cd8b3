"""How a caller waiting on a store writer's job (kinds: `protocol.Job`) gets its result back within a deadline."""

from __future__ import annotations

import threading
import time

from indexer import log
from indexer.errors import WriterBusyError
from indexer.protocol import Job

# jobs whose success shows the store takes writes again (a look at the root, a decay or counting
# pass that found nothing to change, a verify: none of them wrote)
PROVES_WRITES = (Job.PATHS, Job.RECONCILE, Job.RETRY, Job.REBUILD, Job.CLEANUP, Job.REINFORCE)


class Stopping(Exception):
    """Raised inside long work when a stop was requested, between committed files."""


class Reply:
    """How a writer hands progress and the result of a job back to a waiting request.

    Finished exactly once, by whoever consumes the job (the writer, a fold of it into another job, or
    the daemon's stop); a waiter gives up at its deadline, and the writer then logs the late job.
    """

    def __init__(self, progress=None, job: str = "job"):
        self.progress = progress
        self.job = job
        self.done = threading.Event()
        self.result = None
        self.error: BaseException | None = None
        self.abandoned_at: float | None = None  # when its waiter stopped waiting
        self._born = self._heard = time.monotonic()
        self._lock = threading.Lock()

    def report(self, done: int, total: int) -> None:
        """Progress of a long job: passed on to the waiter, and each report moves its deadline on."""
        self._heard = time.monotonic()
        if self.progress is not None:
            try:
                self.progress(done, total)
            except OSError:  # the waiter hung up; the job goes on without telling anyone
                self.progress = None

    def finish(self, result=None, error: BaseException | None = None) -> bool:
        """Hand over the answer; False if the job was answered already (the first answer stands)."""
        with self._lock:
            if self.done.is_set():
                return False
            self.result, self.error = result, error
            self.done.set()
        if self.abandoned_at is not None:
            log.get().warning("job_outlived_deadline", job=self.job, seconds=round(time.monotonic() - self._born, 1),
                              waited=round(self.abandoned_at - self._born, 1), error=str(error) if error else None)
        return True

    def wait(self, timeout: float | None = None, what: str = "the store's writer"):
        """The job's result, or its error raised; a WriterBusyError once `timeout` seconds pass without an
        answer or a progress report (the job itself still runs)."""
        while not self.done.wait(None if timeout is None else max(0.0, self._heard + timeout - time.monotonic())):
            if time.monotonic() < self._heard + timeout:
                continue  # progress came in while we waited: the deadline moved
            self.abandoned_at = time.monotonic()
            if not self.done.is_set():
                waited = round(self.abandoned_at - self._born, 1)
                log.get().warning("job_deadline_passed", job=self.job, waited_s=waited)
                raise WriterBusyError(f"{what} did not finish the {self.job} job within {waited:g} s (it is busy "
                                      f"with earlier work, which goes on); retry in a few seconds",
                                      retry_after=max(1, min(30, int(waited // 4) or 1)))
        if self.error is not None:
            raise self.error
        return self.result
