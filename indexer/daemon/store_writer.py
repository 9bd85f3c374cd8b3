"""One store's single writer thread: indexes watched paths, runs the passes, follows its root if replaced."""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path

from indexer import log
from indexer.config import Config
from indexer.errors import MdmemError, StoreError
from indexer.memories import usage as counters
from indexer.store_jobs import STORE_JOBS
from indexer.models import SyncReport
from indexer.sync.vector_fill import Filler
from indexer.sync.verify import check_store
from indexer.sync.rebuild import rebuild_store
from indexer.notes.scanner import NoteFilter
from indexer.index.stores import Store, identity, open_store
from indexer.sync.store_sync import EDIT_E5_TEXTS, index_paths, sync_store
from indexer.daemon.jobs import PROVES_WRITES, Job, Reply, Stopping
from indexer.daemon.path_jobs import Sliced, expand, is_big, small_saves
from indexer.daemon.stall import Stall

BURST_GROUP = 16  # files indexed together in a burst; small enough that a stop request waits seconds, not minutes
ROOT_CHECK_S = 2.0  # how often an idle writer looks whether its root or index file was deleted or replaced
ACCESS_GATHER_S = 0.25  # the access counts of searches this close together are written in one commit


class StoreWriter(threading.Thread):
    """The only writer of one store's index; watcher, scheduler and socket just enqueue jobs."""

    def __init__(self, name: str, root: Path, embedder, cfg: Config, stopping: threading.Event, lock=None,
                 on_change=None, kept=None):
        super().__init__(name=f"mdmem-writer-{name}", daemon=True)
        self.store_name, self.root, self.embedder, self.cfg = name, Path(root), embedder, cfg
        self.kept = kept  # the daemon's kept copies, shared with its readers' stores of the same file
        self.stopping = stopping
        self.lock = lock  # the daemon's StoreLock of this root, taken again in a recreated root
        self.on_change = on_change or (lambda name, attached: None)
        self.missing: str | None = None  # why the store is detached from its root, None while it is open
        self.jobs: queue.Queue = queue.Queue()
        self.busy: str | None = None
        self.last_sync: float | None = None
        self.ready = threading.Event()
        self.open_error: BaseException | None = None
        self._st: Store | None = None
        self._filter: NoteFilter | None = None  # kept across reopenings: the watcher holds it
        self._ids = (None, None)  # identity of the root folder and index file we opened
        self._held: deque = deque()  # jobs taken from the queue while folding others: they run next, in order
        self._next_check = 0.0
        self.e5_done = False  # no vectors left to fill now (set again after each job that may add texts)
        self._filler = Filler()  # the embedder's waiting vectors (retried with backoff), then the e5 ones
        self._log = log.get().bind(store=name)
        self.stall = Stall(self._log)

    @property
    def filter(self) -> NoteFilter:
        return self._filter

    def pending(self) -> int:
        return self.jobs.qsize() + len(self._held) + (1 if self.busy else 0)

    def submit(self, job: Job | str, payload=None, reply: Reply | None = None) -> None:
        job = Job(job)
        if reply is not None:
            reply.job = f"{self.store_name} {job.value}"
        self.jobs.put((job, payload, reply))

    def call(self, job: Job, payload=None, timeout: float | None = None):
        """Submit a job and wait for its result until the deadline (raises what the job raised, or
        WriterBusyError once `timeout` seconds have passed; the job itself still runs)."""
        reply = Reply()
        self.submit(job, payload, reply)
        return reply.wait(timeout, what=f"the {self.store_name} store's writer")

    def run(self) -> None:
        try:
            self._open()
        except BaseException as exc:
            self.open_error = exc
            self.ready.set()
            return
        self.ready.set()
        try:
            while not self.stopping.is_set():
                try:
                    job, payload, reply = self._held.popleft() if self._held else self.jobs.get(
                        timeout=0.5 if self.e5_done else 0.01)
                except queue.Empty:
                    if (not self.e5_done or self._filler.due(self._st)) and self.missing is None and not self.stall.cause:
                        self.e5_done = self._fill()  # idle: vectors a few at a time, never while stalled
                        continue
                    if self.stall.due():  # the work a full disk stopped: a reconcile finds all of it
                        job, payload, reply = Job.RETRY, None, None
                    elif time.monotonic() < self._next_check:
                        continue
                    else:
                        job, payload, reply = Job.ROOT, None, None
                replies = [reply] if reply else []  # every job this run answers: its own and those folded in
                if job == Job.PATHS:
                    payload = set(payload)
                    self._fold(Job.PATHS, payload.update, replies)
                elif job == Job.ACCESS:
                    self.busy = job.value  # counts being gathered are pending work
                    payload = list(payload)
                    self._fold(Job.ACCESS, payload.extend, replies, ACCESS_GATHER_S)
                self.busy = job.value if replies or job != Job.ROOT else None  # a routine look is not work to wait for
                try:
                    self._follow_root()
                    result = self._do(job, payload, reply) if self.missing is None else self._skip(job, replies)
                    if job in PROVES_WRITES:
                        self.stall.succeeded()
                    _answer(replies, result)
                except Stopping:
                    _answer(replies, error=MdmemError("the daemon is stopping; retry when it is back"))
                    break
                except Exception as exc:  # one bad file or job never stops the daemon
                    if self.stall.covers(exc):
                        self.stall.failed(job, exc)
                    else:
                        self._log.error("job_failed", job=job, error=str(exc),
                                        exc_info=not isinstance(exc, MdmemError))
                    _answer(replies, error=exc)
                except BaseException as exc:  # even an interrupt leaves no caller waiting
                    _answer(replies, error=MdmemError(f"the daemon's writer stopped ({type(exc).__name__}); retry"))
                    raise
                finally:
                    self.busy = None
                    self.e5_done = self.e5_done and job not in (Job.PATHS, Job.RECONCILE, Job.REBUILD, Job.RETRY)
        finally:
            self._fail_waiting()
            if self._st is not None:
                self._st.close()

    def _fill(self) -> bool:
        """One small batch of waiting vectors between jobs; True when none are left (or filling fails)."""
        try:
            return self._filler.step(self._st, self.embedder, self.cfg)
        except Exception as exc:  # the stage only ranks, and waiting vectors wait: search keeps full text
            self._log.warning("vector_fill_failed", error=str(exc))
            return True

    # -- the root folder and index file: deleted, replaced, recreated ------------------------------------
    def _open(self) -> None:
        st = open_store(self.store_name, self.root, self.embedder, follow_symlinks=self.cfg.follow_symlinks,
                        kept=self.kept)
        if self._filter is None:
            self._filter = st.filter
        else:
            st.filter = self._filter
            self._filter.reload()  # the new folder may have another .mdmemignore
        self._st = st
        self._ids = (identity(self.root, folder=True), identity(st.index_path))

    def _follow_root(self) -> None:
        """Detach from a root or index file that is gone or replaced; attach to the one there now."""
        self._next_check = time.monotonic() + ROOT_CHECK_S
        now = identity(self.root, folder=True)
        if self.missing is None:
            if now is None:
                self._detach("store_root_missing", "not a folder any more" if self.root.exists() else "deleted")
            elif now != self._ids[0]:
                self._detach("store_root_missing", "replaced by another folder")
            elif identity(self._st.index_path) != self._ids[1]:
                self._detach("store_index_replaced", "index file deleted or replaced")
            elif self.lock is not None and not self.lock.intact():
                self.lock.release()  # its file went away: take the lock again on the file there now
                if self._attach_lock():
                    self._log.info("store_lock_retaken", lock=str(self.lock.path))
        if self.missing is not None and now is not None:
            self._attach()

    def _detach(self, event: str, reason: str) -> None:
        self._st.close()  # readers of the old file are dropped by on_change
        self._st = None
        if self.lock is not None:
            self.lock.release()
        self.missing = reason
        self.on_change(self.store_name, False)
        self._log.warning(event, root=str(self.root), reason=reason,
                          action="searches of this store find nothing until it is open again")

    def _attach_lock(self) -> bool:
        try:
            if self.lock is not None:
                self.lock.acquire()
            return True
        except StoreError as exc:
            self._set_missing("another mdmem serve holds the store", str(exc))
            return False

    def _attach(self) -> None:
        if not self._attach_lock():
            return
        try:
            self._open()
        except (MdmemError, OSError) as exc:
            if self.lock is not None:
                self.lock.release()
            self._set_missing("cannot open the index", str(exc))
            return
        was = self.missing
        self.missing = None
        self.on_change(self.store_name, True)  # watch the new folder before reconciling it
        self.busy = "reconcile"
        rep = self._reconcile()
        self._log.info("store_root_restored", root=str(self.root), was=was, files=rep.files, indexed=rep.indexed)

    def _set_missing(self, reason: str, detail: str) -> None:
        if self._st is not None:
            self._detach("store_lock_lost", reason)
        if self.missing != reason:  # logged once, not at every retry
            self.missing = reason
            self._log.error("store_reattach_failed", root=str(self.root), reason=reason, error=detail)

    def _skip(self, job: str, replies: list[Reply]):
        """A detached store has nothing to index; a request that waits for it gets told why."""
        if replies and job != Job.ROOT:
            raise StoreError(f"the {self.store_name} store's root {self.root} is missing ({self.missing}); "
                             f"create the folder again and the daemon indexes it")
        return None

    def _fold(self, kind: Job, add, replies: list[Reply], wait: float = 0.0) -> None:
        """Hand add() the payload of each queued job of this kind and `replies` its reply (answered with
        the job they join); other jobs taken are held, in order, to run next.

        Without a wait every queued one is folded (path batches: a git checkout sends hundreds). With
        one (access counts: an agent searching in a loop would otherwise pay a commit, 0.6 ms at 100k
        chunks and a WAL checkpoint now and then, beside each next query) the jobs arriving within it
        are folded too, and the first other job ends the wait, so it still sees every count before it.
        """
        deadline = time.monotonic() + wait
        while not self.stopping.is_set():
            left = deadline - time.monotonic()
            try:
                item = self.jobs.get(timeout=left) if left > 0 else self.jobs.get_nowait()
            except queue.Empty:
                return
            if item[0] == kind:
                add(item[1])
                if item[2] is not None:
                    replies.append(item[2])
                continue
            self._held.append(item)
            if wait:
                return

    def _fail_waiting(self) -> None:
        stopped = MdmemError("the daemon stopped before this job ran; retry when it is back")
        _answer([reply for _job, _payload, reply in self._held if reply], error=stopped)
        self._held.clear()
        while True:
            try:
                _job, _payload, reply = self.jobs.get_nowait()
            except queue.Empty:
                return
            _answer([reply] if reply else [], error=stopped)

    def _do(self, job: Job, payload, reply: Reply | None):
        return HANDLERS[job](self, payload, reply)

    # -- the daemon's own handlers (named in HANDLERS below; the kinds run alike are store_jobs.STORE_JOBS) ----------
    def _job_root(self, payload, reply):
        return None  # the look at the root before every job was the work

    def _job_reconcile(self, payload, reply):
        return self._reconcile(reply.report if reply else None)

    def _job_retry(self, payload, reply):
        if self._st.readonly:  # opened while the disk was full: open again to write
            self._st.close()
            self._open()
        return self._reconcile()

    def _job_rebuild(self, payload, reply):
        return self._rebuild(bool(payload), reply.report if reply else None)

    def _job_verify(self, payload, reply):
        return check_store(self.store_name, lambda: self._st, self.cfg, self.embedder, bool(payload),
                           rebuild=lambda: self._rebuild(False, None), warn=self._warn)

    def _job_access(self, payload, reply):
        counters.tell_once([counters.count_access(self._st, list(payload))],
                           lambda message: self._log.warning("access_counts_kept", reason=message))

    def _on_store(self, job: Job, payload):
        """A kind both writers run alike (store_jobs.STORE_JOBS), on this writer's store; a pass's figures are logged."""
        result = STORE_JOBS[job](self._st, payload, self.cfg, self._warn)
        if isinstance(result, dict):
            self._log.info(f"{job.value}_pass", **{k: v for k, v in result.items() if k != "store"})
        return result

    def _index(self, paths: set, nested: bool = False) -> dict:
        files = expand(paths, self.root, self._st)
        big = [] if nested else [p for p in files if is_big(p)]
        files = [p for p in files if p not in big] + big  # small notes first; each big one alone, in slices
        done = 0
        for i in range(0, len(files) - len(big), BURST_GROUP):
            if self.stopping.is_set():
                raise Stopping()  # the rest is picked up by the next start's reconciliation
            group = files[i:min(i + BURST_GROUP, len(files) - len(big))]
            if len(group) == 1:
                done += self._index_one(group[0])
                continue
            # a burst (checkout, sync, copy) embeds a group's new text in one batch: about twice the
            # throughput of one call per note; one file that fails sends the group back one by one
            t0 = time.perf_counter()
            try:
                rep = index_paths(self._st, group, self.embedder, self.cfg, warn=self._warn)
            except (Stopping, KeyboardInterrupt):
                raise
            except Exception:
                done += sum(self._index_one(path) for path in group)
                continue
            self._log.info("files_indexed", files=len(group), indexed=rep.indexed, removed=rep.deleted,
                           added=rep.chunks_added, chunks_removed=rep.chunks_removed, embedded=rep.embedded,
                           reinforced=rep.reinforced, ms=round((time.perf_counter() - t0) * 1000, 1),
                           paths=[self._st.filter.uri_of(p) for p in group])
            done += rep.deleted + rep.indexed
        for path in big:
            if self.stopping.is_set():
                raise Stopping()
            done += self._index_one(path, Sliced(self.embedder, self._index_small_saves))
        self.last_sync = time.time()
        return {"files": len(files), "changed": done}

    def _index_small_saves(self) -> None:
        """Between two slices of a big note's embedding: the small notes saved meanwhile, answered at once
        (the big note's rows are written only after its last slice, so nothing half-done is in between)."""
        for _job, payload, reply in small_saves(self.jobs, self._held):
            try:
                _answer([reply] if reply else [], self._index(set(payload), nested=True))
            except Stopping:
                _answer([reply] if reply else [], error=MdmemError("the daemon is stopping; retry when it is back"))
                raise
            except Exception as exc:  # the small note's failure is its own; the big note goes on
                self._log.error("job_failed", job=Job.PATHS, error=str(exc), exc_info=not isinstance(exc, MdmemError))
                _answer([reply] if reply else [], error=exc)

    def _index_one(self, path: Path, embedder=None) -> int:
        t0 = time.perf_counter()
        rep = index_paths(self._st, [path], embedder or self.embedder, self.cfg, warn=self._warn)
        ms = round((time.perf_counter() - t0) * 1000, 1)
        uri = self._st.filter.uri_of(path)
        if rep.deleted:
            self._log.info("file_removed", path=uri, chunks=rep.chunks_removed, ms=ms)
        elif rep.indexed:
            self._log.info("file_indexed", path=uri, chunks=rep.chunks_added + rep.chunks_kept,
                           added=rep.chunks_added, removed=rep.chunks_removed, embedded=rep.embedded,
                           reinforced=rep.reinforced, ms=ms)
        return rep.deleted + rep.indexed

    def _reconcile(self, progress=None) -> SyncReport:
        def check_stop(done, total):
            if self.stopping.is_set():
                raise Stopping()
            if progress is not None:
                progress(done, total)

        self._st.filter.reload()
        rep = sync_store(self._st, self.embedder, self.cfg, progress=check_stop, warn=self._warn, e5_limit=EDIT_E5_TEXTS)
        self.last_sync = time.time()
        fields = {k: v for k, v in asdict(rep).items() if k not in ("store", "skipped")}
        self._log.info("reconciled", skipped=len(rep.skipped), **fields)
        return rep

    def _rebuild(self, no_cache: bool, progress) -> SyncReport:
        self._st.close()  # the rebuild opens its own connections; ours would only hold old pages
        self._st = None
        try:
            rep = rebuild_store(self.store_name, self.root, self.embedder, self.cfg, no_cache=no_cache,
                                progress=progress, warn=self._warn)
        finally:
            self._open()
        self.last_sync = time.time()
        self._log.info("rebuilt", files=rep.indexed, chunks=rep.chunks_added, embedded=rep.embedded, seconds=round(rep.seconds, 3))
        return rep

    def _warn(self, message: str) -> None:
        self._log.warning(getattr(message, "event", "note_skipped"), reason=str(message))


def _answer(replies: list[Reply], result=None, error: BaseException | None = None) -> None:
    """One answer to every caller of a job, including the jobs folded into it."""
    for reply in replies:
        reply.finish(result, error)


# every kind of job (protocol.Job) and what runs it on the writer's thread: handler(writer, payload, reply)
HANDLERS = {**{job: lambda w, payload, reply, job=job: w._on_store(job, payload) for job in STORE_JOBS},
            Job.ROOT: StoreWriter._job_root, Job.PATHS: lambda w, payload, reply: w._index(payload),
            Job.RECONCILE: StoreWriter._job_reconcile, Job.RETRY: StoreWriter._job_retry,
            Job.REBUILD: StoreWriter._job_rebuild, Job.VERIFY: StoreWriter._job_verify,
            Job.ACCESS: StoreWriter._job_access}
