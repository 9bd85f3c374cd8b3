"""What every memory backend answers (`MemoryAPI`: `Memory` and the daemon's socket client alike), and
what a `Memory` hands its index writes to (`Writer`: in this process, or the daemon's one writer per store).

Every operation of `MemoryAPI` is served by a running daemon when one serves the stores, and by this
process otherwise: that is the whole routing rule (the command line's `backend`).
"""

from __future__ import annotations

import enum
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

from indexer.models import Hit, SyncReport, VerifyReport


@runtime_checkable
class MemoryAPI(Protocol):
    """The operations the command line, MCP and HTTP call; a test holds both backends to these signatures."""

    def index(self, scope: str = "all", progress=None) -> list[SyncReport]:
        """Incremental sync: new, changed and deleted files only."""

    def rebuild(self, scope: str = "all", no_cache: bool = False, progress=None) -> list[SyncReport]:
        """Recreate the index from the Markdown and swap it in atomically."""

    def search(self, query: str, mode: str | None = None, scope: str = "all", limit: int | None = None,
               under=(), min_score: float | None = None, explain: bool = False, bump: bool = True,
               space: str | None = None, since=None, until=None, now=None, spaces: list[str] | None = None) -> list[Hit]:
        """One merged ranking over the chosen stores; every returned hit counts as an access."""

    def stats(self, scope: str = "all") -> dict:
        """Files, chunks, vectors and counts by type, per store."""

    def status(self, scope: str = "all") -> dict:
        """Per store: files, chunks, last sync, and whether the index lags the notes."""

    def decay(self, scope: str = "all") -> list[dict]:
        """Recompute every chunk's strength now."""

    def cleanup(self, scope: str = "all") -> list[dict]:
        """Drop rows of vanished files and orphans, optimise FTS, checkpoint the WAL."""

    def add(self, text: str, type: str = "fact", importance: int | None = None, scope: str | None = None,
            file: str | None = None, redact: bool = False, space: str | None = None,
            supersedes: str | None = None) -> dict:
        """Write one memory to its Markdown note (or reinforce its twin) and index it at once."""

    def recall(self, query: str, context: str | None = None, limit: int | None = None,
               max_chars: int | None = None, scope: str = "all", space: str | None = None, since=None,
               until=None, now=None, spaces: list[str] | None = None, max_tokens: int | None = None) -> dict:
        """The prompt-ready block {"text", "memories", "tier", "query"}; spaces: several in one ranking."""

    def get(self, ref: str, space: str | None = None, scope: str = "all") -> dict:
        """A memory by id, or a note's lines by `URI[:START[-END]]`, as the Markdown holds them now."""

    def history(self, id: str, space: str | None = None, scope: str = "all") -> dict:
        """A memory's versions, oldest first, from its note (struck-through lines) and the ids it had."""

    def recent(self, limit: int = 10, scope: str = "all", space: str | None = None, since=None, until=None,
               now=None, type: str | None = None, note: str | None = None) -> list[dict]:
        """The newest memories by their own date, newest first; since/until keep those dated on those days, type
        those of that type, note those in the notes whose path holds it."""

    def spaces(self, scope: str = "all") -> list[dict]:
        """Every named space with memories: {"space", "store", "memories", "created_at", "updated_at"}."""

    def locate(self, id: str, scope: str = "all") -> str | None:
        """The space a memory id lives in (None: the default space); NotFoundError if none holds it."""

    def update(self, id: str, text: str, space: str | None = None, expected_hash: str | None = None,
               redact: bool = False) -> dict:
        """Replace a memory's text in its note (counters kept) and index it; ConflictError if it changed."""

    def forget(self, id: str, space: str | None = None, expected_hash: str | None = None, purge: bool = False) -> dict:
        """Remove a memory's lines from its note and the index, kept in the trash (purge: removed everywhere)."""

    def forget_matching(self, query: str, space: str | None = None, yes: bool = False,
                        limit: int | None = None, purge: bool = False) -> dict:
        """The memories whose text holds the query (removed only with yes=True) and those only similar (never)."""

    def restore(self, id: str, space: str | None = None) -> dict:
        """Put a forgotten (or corrected) memory back where it was, from the trash, and index it."""

    def trash(self, space: str | None = None, scope: str = "all") -> dict:
        """What forget removed and update replaced, newest first, kept for `trash_days`."""

    def import_notes(self, path: str, format: str | None = None, space: str | None = None, scope: str = "global",
                     dry_run: bool = False, progress=None, skip_bad: bool = False) -> dict:
        """Import SillyTavern chats, lorebooks, cards or a mem0 export; a second run adds nothing."""

    def verify(self, scope: str = "all", repair: bool = False) -> list[VerifyReport]:
        """Compare each store with its notes; with repair, re-index what differs and check again."""

    def review(self, action: str = "list", id: str | None = None, text: str | None = None,
               space: str | None = None, all: bool = False) -> dict:
        """The review queue (or with `all` the decision log); accept, reject, undo or edit one decision."""

    def consolidate(self, now=None) -> dict:
        """Propose weekly summaries of journal memories older than consolidate_after_days (review queue)."""

    def close(self) -> None:
        """Release connections."""


OPERATIONS = tuple(name for name in MemoryAPI.__dict__ if not name.startswith("_") and name != "close")


class Job(str, enum.Enum):
    """Every kind of change to a store's index, declared once here; a table names the handler beside the kind:
    `store_jobs.STORE_JOBS` for the kinds both writers run alike, `store_jobs.LOCAL_JOBS` and
    `daemon.store_writer.HANDLERS` for each writer's own way of the others. A new write is a kind here and its
    handler in `STORE_JOBS` (plus a named method on `Writer` when callers ask for it by name)."""

    ROOT = "root"  # the daemon's: look whether the root folder or index file was deleted or replaced
    PATHS = "paths"  # index these changed paths (watcher events, or a note just written by `add`)
    RECONCILE = "reconcile"  # bring the whole store in step with its notes (start-up, `index`, schedule)
    DECAY = "decay"
    CLEANUP = "cleanup"
    REBUILD = "rebuild"
    VERIFY = "verify"  # check, and with a true payload repair
    ACCESS = "access"  # count records handed to a caller (fire and forget)
    REINFORCE = "reinforce"  # one more restatement of a record (`add` of a twin)
    RETRY = "retry"  # the daemon's: the work a full disk or read-only store stopped (a reconcile finds all of it)
    CARRY = "carry"  # an updated memory keeps its old record's counters (`update`)
    DECISION = "decision"  # one line of the decision log (`add`'s decisions, the review queue)
    CONSOLIDATE = "consolidate"  # propose summaries of old journal weeks (scheduled)


class Writer(Protocol):
    """Every change a `Memory` makes to an index, each a `Job`: `memory.LocalWriter` runs it at once on this
    process's connections; `daemon.writer_jobs.DaemonWriter` makes it a job of the store's one writer thread.
    A writer says how a job runs (`run`, `run_all`); the named writes below are said once, for both."""

    def run(self, store: str, job: Job, payload=None):
        """One store's job of this kind, answered once it is done."""

    def run_all(self, scope: str, job: Job, payload=None, progress=None) -> list:
        """The job on every store of the scope, one result each (a report, or a pass's dict)."""

    def status(self, scope: str) -> dict: ...

    def record_access(self, hits: list[Hit]) -> None:
        """Count the hits handed out (the daemon gathers them; nobody waits for them)."""

    def settle_counts(self, stores: list[str]) -> None:
        """Return once the access counts already handed over for these stores are written."""

    def index(self, scope: str, progress=None) -> list[SyncReport]:
        return self.run_all(scope, Job.RECONCILE, progress=progress)

    def rebuild(self, scope: str, no_cache: bool, progress=None) -> list[SyncReport]:
        return self.run_all(scope, Job.REBUILD, no_cache, progress)

    def decay(self, scope: str) -> list[dict]:
        return self.run_all(scope, Job.DECAY)

    def cleanup(self, scope: str) -> list[dict]:
        return self.run_all(scope, Job.CLEANUP)

    def verify(self, scope: str, repair: bool) -> list[VerifyReport]:
        return self.run_all(scope, Job.VERIFY, repair)

    def reinforce(self, store: str, chunk_id: str, by: float = 1.0) -> float | None:
        return self.run(store, Job.REINFORCE, (chunk_id, by))

    def index_notes(self, store: str, paths: list[Path]) -> None:
        """Index these notes of the store now (an add, an edit, an import): one job, new text embedded in batches."""
        self.run(store, Job.PATHS, [str(p) for p in paths])

    def carry_counters(self, store: str, uri: str, line: int, old: dict) -> str | None:
        return self.run(store, Job.CARRY, (uri, line, old))

    def log_decision(self, store: str, event: dict) -> None:
        """Append one event to the store's decision log (memories/decisions.py)."""
        self.run(store, Job.DECISION, event)


def one_at_a_time(backend):
    """A lender of one backend to callers on several threads (MCP over stdio): a `Memory`'s connections
    and the socket client's connection serve one thread at a time, so each call waits for the one before."""
    lock = threading.Lock()

    @contextmanager
    def lend():
        with lock:
            yield backend
    return lend


def one_each(first, more):
    """A lender for callers on several threads where another backend is cheap (the daemon's socket: one
    connection each): an idle one, or a new one from more(), so no call waits for another; MCP over stdio
    through the daemon answers a one-word search beside a long question this way."""
    idle = [first]
    lock = threading.Lock()

    @contextmanager
    def lend():
        with lock:
            backend = idle.pop() if idle else None
        backend = backend or more()
        try:
            yield backend
        finally:
            with lock:
                idle.append(backend)
    return lend
