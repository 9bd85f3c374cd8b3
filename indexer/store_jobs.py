"""Each kind of store write (protocol.Job) and its handler, named beside it, and a store's status: what both
writers (memory.LocalWriter, the daemon's store_writer) share."""

from __future__ import annotations

from pathlib import Path

from indexer.config import Config
from indexer.index.stores import Store, store_roots
from indexer.memories import usage
from indexer.models import SyncReport, VerifyReport
from indexer.notes import clock, decision_log
from indexer.protocol import Job


def store_status(root, counts: dict, *, pending: int, stale: bool, busy: str | None = None, last_sync=None,
                 daemon: dict | None = None) -> dict:
    """One store's `status`, the same keys whoever answers; `daemon` adds what only a serving daemon knows."""
    return {"root": str(root), "files": counts.get("documents", 0), "chunks": counts.get("chunks", 0),
            "vectors": counts.get("vectors", 0), "e5": [counts.get("e5_vectors", 0), counts.get("e5_texts", 0)],
            "vectors_pending": counts.get("vectors_pending", 0), "pending": pending,
            "skipped": counts.get("skipped", 0), "busy": busy, "last_sync": last_sync or counts.get("last_indexed_at"),
            "stale": stale, "daemon": daemon is not None, **(daemon or {})}


# -- the handler of each kind of write (protocol.Job), named beside its kind ---------------------------------------
def _decay(st: Store, _payload, cfg: Config, _warn) -> dict:
    from indexer.sync.passes import decay_store
    return decay_store(st, cfg)


def _cleanup(st: Store, _payload, cfg: Config, _warn) -> dict:
    from indexer.sync.passes import cleanup_store
    return cleanup_store(st, cfg.trash_days, cfg.decisions_days)


def _reinforce(st: Store, args: tuple, _cfg, _warn) -> float | None:
    return usage.reinforce(st, *args)


def _carry(st: Store, args: tuple, _cfg, _warn) -> str | None:
    return usage.carry(st, *args)


def _decision(st: Store, event: dict, _cfg, _warn) -> None:
    decision_log.append(st.root, event)


def _consolidate(st: Store, _payload, cfg: Config, _warn) -> dict:
    """The scheduled pass on one store; its writer appends the proposals itself, being the store's one writer."""
    from indexer.memories.consolidate import propose
    from indexer.providers.llm_review import summariser
    return propose([st], clock.today(cfg.timezone), cfg.consolidate_after_days,
                   lambda _store, event: decision_log.append(st.root, event), summariser(cfg))


# the kinds both writers run alike, on one store: handler(store, payload, cfg, warn) (the daemon's writer
# thread adds its log lines)
STORE_JOBS = {Job.DECAY: _decay, Job.CLEANUP: _cleanup, Job.REINFORCE: _reinforce, Job.CARRY: _carry,
              Job.DECISION: _decision, Job.CONSOLIDATE: _consolidate}


def _local_reconcile(w, name: str, _payload, progress) -> SyncReport:
    from indexer.sync.store_sync import sync_store
    w.mem.fetch_models()
    return sync_store(w.store(name), w.mem.embedder, w.mem.cfg, progress=progress, warn=w.mem._warn)


def _local_rebuild(w, name: str, no_cache: bool, progress) -> SyncReport:
    from indexer.sync.rebuild import rebuild_store
    w.mem.fetch_models()
    w.mem.close_store(name)  # its file is replaced: connections to the old one go first
    root = dict(store_roots(w.mem.cfg, name))[name]
    return rebuild_store(name, root, w.mem.embedder, w.mem.cfg, no_cache=bool(no_cache), progress=progress,
                         warn=w.mem._warn)


def _local_verify(w, name: str, repair: bool, _progress) -> VerifyReport:
    from indexer.sync.verify import check_store
    return check_store(name, lambda: w.mem.stores(name)[0], w.mem.cfg, w.mem.embedder, bool(repair),
                       rebuild=lambda: w.run_all(name, Job.REBUILD, False), warn=w.mem._warn)


def _local_paths(w, name: str, paths, _progress) -> None:
    from indexer.sync.store_sync import index_paths
    index_paths(w.store(name), [Path(p) for p in paths], w.mem.embedder, w.mem.cfg, warn=w.mem._warn)


# this process's own way of the kinds the daemon's writer runs otherwise: handler(writer, store name, payload,
# progress); the daemon's are store_writer.HANDLERS
LOCAL_JOBS = {Job.RECONCILE: _local_reconcile, Job.REBUILD: _local_rebuild, Job.VERIFY: _local_verify,
              Job.PATHS: _local_paths}
