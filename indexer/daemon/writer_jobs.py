"""The daemon's `Writer`: every index write of a request becomes a job of the store's one writer thread."""

from __future__ import annotations

from pathlib import Path

from indexer.daemon.jobs import Job
from indexer.errors import StoreError
from indexer.memories import usage
from indexer.models import Hit, SyncReport, VerifyReport


class DaemonWriter:
    """The writes of one request's `Memory` (read-only connections), for a caller in `project`."""

    def __init__(self, daemon, project=None):
        self.daemon, self.project = daemon, project

    # -- store-wide: a job on each writer of the scope, answered within job_timeout_s -------------
    def index(self, scope: str, progress=None) -> list[SyncReport]:
        return [SyncReport(**r) for r in self.daemon.run_job(Job.RECONCILE, scope, progress=progress, project=self.project)]

    def rebuild(self, scope: str, no_cache: bool, progress=None) -> list[SyncReport]:
        return [SyncReport(**r) for r in self.daemon.run_job(Job.REBUILD, scope, no_cache, progress, self.project)]

    def decay(self, scope: str) -> list[dict]:
        return self.daemon.run_job(Job.DECAY, scope, project=self.project)

    def cleanup(self, scope: str) -> list[dict]:
        return self.daemon.run_job(Job.CLEANUP, scope, project=self.project)

    def verify(self, scope: str, repair: bool) -> list[VerifyReport]:
        return [VerifyReport.from_dict(r) for r in self.daemon.run_job(Job.VERIFY, scope, repair, project=self.project)]

    def status(self, scope: str) -> dict:
        return {name: s for name, s in self.daemon.status(self.project).items() if scope in ("all", name)}

    # -- one store: a job answered within write_timeout_s ---------------------------------------
    def _call(self, store: str, job: Job, payload=None):
        return self._writer(store).call(job, payload, timeout=self.daemon.cfg.write_timeout_s)

    def _writer(self, store: str):
        w = self.daemon.writers.get(self.daemon.key(store, self.project))
        if w is None or w.missing is not None:
            raise StoreError(f"the {store} store is not open in the daemon; see `mdmem status`")
        return w

    def record_access(self, hits: list[Hit]) -> None:
        for store, ids in usage.ids_by_store(hits).items():
            w = self.daemon.writers.get(self.daemon.key(store, self.project))
            if w is not None:
                w.submit(Job.ACCESS, ids)  # no reply: a search never waits for its own counters

    def settle_counts(self, stores: list[str]) -> None:
        """A writer gathers access counts for a moment (store_writer.ACCESS_GATHER_S), and any job behind
        them ends that: the cheapest job, a look at the root, is answered once they are written."""
        for name in stores:
            w = self.daemon.writers.get(self.daemon.key(name, self.project))
            if w is not None and w.missing is None:
                w.call(Job.ROOT, timeout=self.daemon.cfg.write_timeout_s)

    def reinforce(self, store: str, chunk_id: str) -> float | None:
        return self._call(store, Job.REINFORCE, chunk_id)

    def index_notes(self, store: str, paths: list[Path]) -> None:
        self._call(store, Job.PATHS, {str(p) for p in paths})  # one job: the new text embedded in batches

    def carry_counters(self, store: str, uri: str, line: int, old: dict) -> str | None:
        return self._call(store, Job.CARRY, (uri, line, old))

    def log_decision(self, store: str, event: dict) -> None:
        self._call(store, Job.DECISION, event)
