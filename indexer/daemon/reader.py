"""A request's view of the stores inside the daemon: reads on read-only connections, writes as writer jobs."""

from __future__ import annotations

from pathlib import Path

from indexer.daemon.jobs import Job
from indexer.errors import StoreError
from indexer.memory import Memory
from indexer.models import Hit, SyncReport, VerifyReport
from indexer.memories import usage as counters


class DaemonWrites:
    """The index writes of `add`, `search` and `recall`, handed to each store's one writer."""

    def __init__(self, daemon, project=None):
        self.daemon, self.project = daemon, project

    def _call(self, store: str, job: Job, payload=None):
        return self._writer(store).call(job, payload, timeout=self.daemon.cfg.write_timeout_s)

    def _writer(self, store: str):
        w = self.daemon.writers.get(self.daemon.key(store, self.project))
        if w is None or w.missing is not None:
            raise StoreError(f"the {store} store is not open in the daemon; see `mdmem status`")
        return w

    def record_access(self, hits: list[Hit]) -> None:
        for store, ids in counters.ids_by_store(hits).items():
            w = self.daemon.writers.get(self.daemon.key(store, self.project))
            if w is not None:
                w.submit(Job.ACCESS, ids)  # no reply: a search never waits for its own counters

    def settle_counts(self, stores: list[str]) -> None:
        """Return once the access counts already handed to these stores' writers are written: a writer
        gathers them for a moment (store_writer.ACCESS_GATHER_S), and any job behind them ends that."""
        for name in stores:
            w = self.daemon.writers.get(self.daemon.key(name, self.project))
            if w is not None and w.missing is None:
                w.call(Job.ROOT, timeout=self.daemon.cfg.write_timeout_s)  # the cheapest job: a look at the root

    def reinforce(self, store: str, chunk_id: str) -> float | None:
        return self._call(store, Job.REINFORCE, chunk_id)

    def index_note(self, store: str, path: Path) -> None:
        self.index_notes(store, [path])

    def index_notes(self, store: str, paths: list[Path]) -> None:
        self._call(store, Job.PATHS, {str(p) for p in paths})  # one job: the new text embedded in batches

    def carry_counters(self, store: str, uri: str, line: int, old: dict) -> str | None:
        return self._call(store, Job.CARRY, (uri, line, old))


class DaemonMemory(Memory):
    """`Memory` for one request thread: store-wide operations become jobs of the stores' writers."""

    def __init__(self, daemon, project=None, **kwargs):
        cfg = daemon.cfg if project == daemon.cfg.project else daemon.cfg.with_(project=project)
        super().__init__(cfg=cfg, read_only=True, writes=DaemonWrites(daemon, project), **kwargs)
        self.daemon, self.project = daemon, project
        self.base = daemon.cfg  # the configuration it was made under: a reload retires it

    def index(self, scope: str = "all", progress=None) -> list[SyncReport]:
        return [SyncReport(**r) for r in self.daemon.run_job(Job.RECONCILE, scope, progress=progress, project=self.project)]

    def rebuild(self, scope: str = "all", no_cache: bool = False, progress=None) -> list[SyncReport]:
        return [SyncReport(**r) for r in self.daemon.run_job(Job.REBUILD, scope, no_cache, progress, self.project)]

    def decay(self, scope: str = "all") -> list[dict]:
        return self.daemon.run_job(Job.DECAY, scope, project=self.project)

    def cleanup(self, scope: str = "all") -> list[dict]:
        return self.daemon.run_job(Job.CLEANUP, scope, project=self.project)

    def verify(self, scope: str = "all", repair: bool = False) -> list[VerifyReport]:
        return [VerifyReport.from_dict(r) for r in self.daemon.run_job(Job.VERIFY, scope, repair, project=self.project)]

    def status(self, scope: str = "all") -> dict:
        return {name: s for name, s in self.daemon.status(self.project).items() if scope in ("all", name)}
