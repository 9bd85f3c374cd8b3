"""Writes stopped by the file system (disk full, read-only, refused): logged once, retried with back-off."""

from __future__ import annotations

import time

from indexer.errors import AccessDeniedError, DiskFullError, ReadOnlyStoreError

FIRST_RETRY_S = 1.0
LAST_RETRY_S = 60.0  # the longest wait between tries: space freed is noticed within a minute
STALLING = (DiskFullError, ReadOnlyStoreError, AccessDeniedError)


class Stall:
    """One store's write stall: when the next try is due, and whether it was already logged."""

    def __init__(self, log, clock=time.monotonic):
        self._log = log
        self._clock = clock
        self.cause: str | None = None  # the error that stopped the writes, None while they succeed
        self.tries = 0
        self._due = 0.0

    @staticmethod
    def covers(exc: BaseException) -> bool:
        return isinstance(exc, STALLING)

    def failed(self, job: str, exc: BaseException) -> None:
        """A write failed for want of space or permission: log it the first time, retry later."""
        if self.cause is None:
            self._log.error("store_writes_stalled", job=job, error=str(exc),
                            action="searches keep answering; pending work is retried with back-off")
        self.cause = str(exc)
        self.tries += 1
        self._due = self._clock() + min(LAST_RETRY_S, FIRST_RETRY_S * 2 ** (self.tries - 1))

    def due(self) -> bool:
        return self.cause is not None and self._clock() >= self._due

    def succeeded(self) -> None:
        if self.cause is not None:
            self._log.info("store_writes_resumed", tries=self.tries, was=self.cause)
        self.cause, self.tries = None, 0
