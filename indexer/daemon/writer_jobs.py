"""The daemon's `Writer`: every index write of a request becomes a job of the store's one writer thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from indexer.config import Config
from indexer.errors import StoreError
from indexer.memories import usage
from indexer.models import Hit
from indexer.protocol import Job, Writer


@dataclass(frozen=True)
class Serving:
    """What the daemon's lent `Memory` objects and their writers use of it, and nothing more."""

    config: Callable[[], Config]  # the config now (a reload replaces it)
    embedder: Callable[[], object]
    kept: Callable[[], object]  # the daemon's kept copies of its indexes (run() replaces them)
    writer: Callable[[str, Path | None], object]  # the StoreWriter of a store for a caller in a project, or None
    run_job: Callable[..., list]  # (job, scope, payload, progress, project): a job on each writer of the scope
    status: Callable[[Path | None], dict]
    stopping: threading.Event
    log: object
    rankers: Callable[[], object] = lambda: None  # the daemon's loaded ranking models, shared by every request


class DaemonWriter(Writer):
    """The writes of one request's `Memory` (read-only connections), for a caller in `project`."""

    def __init__(self, serving: Serving, project=None):
        self.serving, self.project = serving, project

    def run_all(self, scope: str, job: Job, payload=None, progress=None) -> list:
        """A job on each writer of the scope, answered within job_timeout_s."""
        return self.serving.run_job(job, scope, payload, progress, self.project)

    def run(self, store: str, job: Job, payload=None):
        """A job of one store's writer, answered within write_timeout_s."""
        return self._writer(store).call(job, payload, timeout=self.serving.config().write_timeout_s)

    def status(self, scope: str) -> dict:
        return {name: s for name, s in self.serving.status(self.project).items() if scope in ("all", name)}

    def _writer(self, store: str):
        w = self.serving.writer(store, self.project)
        if w is None or w.missing is not None:
            raise StoreError(f"the {store} store is not open in the daemon; see `mdmem status`")
        return w

    def record_access(self, hits: list[Hit]) -> None:
        for store, ids in usage.ids_by_store(hits).items():
            w = self.serving.writer(store, self.project)
            if w is not None:
                w.submit(Job.ACCESS, ids)  # no reply: a search never waits for its own counters

    def settle_counts(self, stores: list[str]) -> None:
        """A writer gathers access counts for a moment (store_writer.ACCESS_GATHER_S), and any job behind
        them ends that: the cheapest job, a look at the root, is answered once they are written."""
        for name in stores:
            w = self.serving.writer(name, self.project)
            if w is not None and w.missing is None:
                w.call(Job.ROOT, timeout=self.serving.config().write_timeout_s)
