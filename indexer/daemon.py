"""`mdmem serve`: one writer thread per store fed by the watcher, the scheduler and the socket."""

from __future__ import annotations

import fcntl
import os
import queue
import signal
import threading
import time
from dataclasses import asdict
from pathlib import Path

from . import config as config_mod
from . import log, store
from .api import Memory
from .config import Config
from .embedder import load_embedder
from .errors import MdmemError, StoreError
from .passes import cleanup_store, decay_store
from .rebuild import rebuild_store
from .scanner import NoteFilter
from .stores import Store, open_store, store_roots
from .sync import index_paths, sync_store

LOCK_NAME = "index.db.lock"  # "index.db*" names are never notes, so the watcher ignores it


class Stopping(Exception):
    """Raised inside long work when a stop was requested, between committed files."""


class StoreLock:
    """One daemon per store: an exclusive flock held for the daemon's lifetime."""

    def __init__(self, root: Path):
        self.path = Path(root) / LOCK_NAME
        self._fd = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise StoreError(f"another `mdmem serve` (pid {holder}) already serves {self.path.parent}; "
                             f"stop it first (e.g. `systemctl --user stop mdmem`) or use it through `mdmem status`")
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock; the file stays (removing it would race)
            self._fd = None


class Reply:
    """How a writer hands progress and the result of a job back to a waiting socket request."""

    def __init__(self, progress=None):
        self.progress = progress
        self.done = threading.Event()
        self.result = None
        self.error: BaseException | None = None

    def finish(self, result=None, error: BaseException | None = None) -> None:
        self.result, self.error = result, error
        self.done.set()

    def wait(self):
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


class StoreWriter(threading.Thread):
    """The only writer of one store's index; watcher, scheduler and socket just enqueue jobs."""

    def __init__(self, name: str, root: Path, embedder, cfg: Config, stopping: threading.Event):
        super().__init__(name=f"mdmem-writer-{name}", daemon=True)
        self.store_name, self.root, self.embedder, self.cfg = name, Path(root), embedder, cfg
        self.stopping = stopping
        self.jobs: queue.Queue = queue.Queue()
        self.busy: str | None = None
        self.last_sync: float | None = None
        self.ready = threading.Event()
        self.open_error: BaseException | None = None
        self._st: Store | None = None
        self._log = log.get().bind(store=name)

    @property
    def filter(self) -> NoteFilter:
        return self._st.filter

    def pending(self) -> int:
        return self.jobs.qsize() + (1 if self.busy else 0)

    def submit(self, job: str, payload=None, reply: Reply | None = None) -> None:
        self.jobs.put((job, payload, reply))

    def run(self) -> None:
        try:
            self._st = open_store(self.store_name, self.root, self.embedder)
        except BaseException as exc:
            self.open_error = exc
            self.ready.set()
            return
        self.ready.set()
        try:
            while not self.stopping.is_set():
                try:
                    job, payload, reply = self.jobs.get(timeout=0.5)
                except queue.Empty:
                    continue
                if job == "paths":
                    payload = self._drain_paths(set(payload))
                self.busy = job
                try:
                    result = self._do(job, payload, reply)
                    if reply:
                        reply.finish(result)
                except Stopping:
                    if reply:
                        reply.finish(error=MdmemError("the daemon is stopping; retry when it is back"))
                    break
                except Exception as exc:  # one bad file or job never stops the daemon
                    self._log.error("job_failed", job=job, error=str(exc), exc_info=not isinstance(exc, MdmemError))
                    if reply:
                        reply.finish(error=exc)
                finally:
                    self.busy = None
        finally:
            self._fail_waiting()
            if self._st is not None:
                self._st.close()

    def _drain_paths(self, paths: set) -> set:
        """Fold every queued path batch into this one (a git checkout sends hundreds)."""
        held = []
        while True:
            try:
                item = self.jobs.get_nowait()
            except queue.Empty:
                break
            if item[0] == "paths":
                paths.update(item[1])
            else:
                held.append(item)
        for item in held:
            self.jobs.put(item)
        return paths

    def _fail_waiting(self) -> None:
        while True:
            try:
                _job, _payload, reply = self.jobs.get_nowait()
            except queue.Empty:
                return
            if reply:
                reply.finish(error=MdmemError("the daemon stopped before this job ran; retry"))

    def _do(self, job: str, payload, reply: Reply | None):
        if job == "paths":
            return self._index(payload)
        if job == "reconcile":
            return self._reconcile()
        if job == "decay":
            result = decay_store(self._st, self.cfg)
            self._log.info("decay_pass", **result)
            return result
        if job == "cleanup":
            result = cleanup_store(self._st)
            self._log.info("cleanup_pass", **{k: v for k, v in result.items() if k != "store"})
            return result
        if job == "rebuild":
            return self._rebuild(bool(payload), reply.progress if reply else None)
        raise MdmemError(f"unknown job {job!r}")

    def _index(self, paths: set) -> dict:
        files = self._expand(paths)
        done = 0
        for path in files:
            if self.stopping.is_set():
                raise Stopping()  # the rest is picked up by the next start's reconciliation
            t0 = time.perf_counter()
            rep = index_paths(self._st, [path], self.embedder, self.cfg, warn=self._warn)
            ms = round((time.perf_counter() - t0) * 1000, 1)
            uri = self._st.filter.uri_of(path)
            if rep.deleted:
                self._log.info("file_removed", path=uri, chunks=rep.chunks_removed, ms=ms)
            elif rep.indexed:
                self._log.info("file_indexed", path=uri, chunks=rep.chunks_added + rep.chunks_kept,
                               added=rep.chunks_added, removed=rep.chunks_removed, embedded=rep.embedded,
                               reinforced=rep.reinforced, ms=ms)
            done += rep.deleted + rep.indexed
        self.last_sync = time.time()
        return {"files": len(files), "changed": done}

    def _expand(self, paths: set) -> list[Path]:
        """Folders become the notes under them, on disk and in the index (a deleted folder has only the latter)."""
        out: set[Path] = set()
        known = None
        for raw in paths:
            p = Path(raw)
            if p.is_dir() or not p.name.endswith(".md"):
                if p.is_dir():
                    for dirpath, dirnames, filenames in os.walk(p):
                        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                        out.update(Path(dirpath) / f for f in filenames if f.endswith(".md"))
                if known is None:
                    known = store.document_uris(self._st.con)
                try:
                    prefix = p.relative_to(self.root).as_posix() + "/"
                except ValueError:
                    continue
                out.update(self.root / u for u in known if u.startswith(prefix))
            else:
                out.add(p)
        return sorted(q for q in out if self._st.filter.uri_of(q) is not None)

    def _reconcile(self) -> dict:
        def check_stop(done, total):
            if self.stopping.is_set():
                raise Stopping()

        self._st.filter.reload()
        rep = sync_store(self._st, self.embedder, self.cfg, progress=check_stop, warn=self._warn)
        self.last_sync = time.time()
        fields = {k: v for k, v in asdict(rep).items() if k not in ("store", "skipped")}
        self._log.info("reconciled", skipped=len(rep.skipped), **fields)
        return asdict(rep)

    def _rebuild(self, no_cache: bool, progress) -> dict:
        self._st.close()  # the rebuild opens its own connections; ours would only hold old pages
        self._st = None
        try:
            rep = rebuild_store(self.store_name, self.root, self.embedder, self.cfg, no_cache=no_cache,
                                progress=progress, warn=self._warn)
        finally:
            self._st = open_store(self.store_name, self.root, self.embedder)
        self.last_sync = time.time()
        self._log.info("rebuilt", files=rep.indexed, chunks=rep.chunks_added, embedded=rep.embedded,
                       seconds=round(rep.seconds, 3))
        return asdict(rep)

    def _warn(self, message: str) -> None:
        self._log.warning("note_skipped", reason=message)


class Daemon:
    """Everything `mdmem serve` runs; `run()` blocks until SIGTERM / SIGINT."""

    def __init__(self, cfg: Config, embedder=None, reload_config=None):
        self.cfg = cfg
        self._embedder = embedder
        self._reload_config = reload_config
        self.stopping = threading.Event()
        self._reload = threading.Event()
        self.writers: dict[str, StoreWriter] = {}
        self.locks: list[StoreLock] = []
        self.watcher = None
        self.scheduler = None
        self.server = None
        self.started_at = time.time()
        self._readers: queue.LifoQueue = queue.LifoQueue()
        self._log = log.get()

    # -- lifecycle ------------------------------------------------------------------------------
    def run(self) -> int:
        from .rpc import Server
        from .scheduler import Scheduler
        from .watcher import Watcher

        roots = store_roots(self.cfg)
        for _name, root in roots:
            lock = StoreLock(root)
            lock.acquire()  # before anything else: a second daemon leaves without touching a thing
            self.locks.append(lock)
        try:
            self._install_signals()
            self._log.info("daemon_starting", pid=os.getpid(), stores={n: str(r) for n, r in roots})
            if self._embedder is None:
                self._embedder = load_embedder(self.cfg, fallback=True,
                                               warn=lambda m: self._log.warning("embedder_fallback", reason=m))
            self._warm_up()
            for name, root in roots:
                w = StoreWriter(name, root, self._embedder, self.cfg, self.stopping)
                w.start()
                w.ready.wait()
                if w.open_error is not None:
                    raise w.open_error
                self.writers[name] = w
            # watch first, reconcile second: edits made during the startup scan are not lost
            self.watcher = Watcher({n: w.root for n, w in self.writers.items()},
                                   {n: w.filter for n, w in self.writers.items()},
                                   self._on_paths, self.cfg.debounce_ms / 1000.0,
                                   on_ignore_changed=lambda n: self.writers[n].submit("reconcile"))
            self.watcher.start()
            for w in self.writers.values():
                w.submit("reconcile")
            self.give_back(self.reader())  # open one reader's connections before the first request
            self.server = Server(self.cfg, self)
            self.server.start()
            self.scheduler = Scheduler(self.cfg, self.enqueue_all)
            self.scheduler.start()
            self._log.info("daemon_ready", socket=str(self.server.path), polling=self.watcher.polling,
                           debounce_ms=self.cfg.debounce_ms, **{f"{k}_minutes": v for k, v in self.scheduler.intervals().items()})
            while not self.stopping.wait(1.0):
                if self._reload.is_set():
                    self._reload.clear()
                    self._do_reload()
                self.watcher.check()
        finally:
            self._shutdown()
        return 0

    def _warm_up(self) -> None:
        """Load the model's weights now, so the first edit or search does not pay for it."""
        try:
            self._embedder.embed_query("mdmem warm-up")
        except Exception as exc:  # a model that cannot embed still leaves full-text search working
            self._log.warning("embedder_warm_up_failed", error=str(exc))

    def _install_signals(self) -> None:
        def stop(signum, _frame):
            self._log.info("daemon_stopping", signal=signal.Signals(signum).name)
            self.stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, lambda *_: self._reload.set())  # acted on by the main loop, not here

    def _do_reload(self) -> None:
        if self._reload_config is None:
            return
        try:
            cfg = self._reload_config()
        except MdmemError as exc:
            self._log.error("config_reload_failed", error=str(exc))
            return
        self.cfg = cfg
        for w in self.writers.values():
            w.cfg = cfg
            w.submit("reconcile")  # .mdmemignore or chunking settings may have changed
        self.watcher.debouncer.delay = cfg.debounce_ms / 1000.0
        self.scheduler.reload(cfg)
        self._drain_readers()
        self._log.info("config_reloaded", debounce_ms=cfg.debounce_ms, **{f"{k}_minutes": v for k, v in self.scheduler.intervals().items()})

    def _shutdown(self) -> None:
        self.stopping.set()
        for part in (self.scheduler, self.watcher, self.server):
            if part is not None:
                try:
                    part.stop()
                except Exception as exc:
                    self._log.warning("stop_failed", part=type(part).__name__, error=str(exc))
        for w in self.writers.values():
            w.join(timeout=60)  # the current file is finished and committed, then the thread ends
        self._drain_readers()
        for lock in self.locks:
            lock.release()
        self._log.info("daemon_stopped")

    # -- work intake ----------------------------------------------------------------------------
    def _on_paths(self, name: str, paths: list[str]) -> None:
        self.writers[name].submit("paths", paths)

    def enqueue_all(self, job: str) -> None:
        for w in self.writers.values():
            w.submit(job)

    def run_job(self, job: str, scope: str = "all", payload=None, progress=None) -> list:
        """Queue a job on each writer of the scope and wait for the results (socket requests)."""
        replies = []
        for name, w in self.writers.items():
            if scope in ("all", name):
                reply = Reply(progress)
                w.submit(job, payload, reply)
                replies.append(reply)
        return [r.wait() for r in replies]

    # -- readers ----------------------------------------------------------------------------------
    def reader(self) -> Memory:
        """A Memory with its own connections, used by one request thread at a time."""
        try:
            return self._readers.get_nowait()
        except queue.Empty:
            return Memory(cfg=self.cfg, embedder=self._embedder,
                          warn=lambda m: self._log.warning("search_warning", reason=m))

    def give_back(self, mem: Memory) -> None:
        if mem.cfg is self.cfg and not self.stopping.is_set():
            self._readers.put(mem)
        else:
            mem.close()

    def _drain_readers(self) -> None:
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                return

    def status(self) -> dict:
        mem = self.reader()
        try:
            stats = mem.stats()
        finally:
            self.give_back(mem)
        out = {}
        for name, w in self.writers.items():
            s = stats.get(name, {})
            pending = w.pending() + (self.watcher.pending(name) if self.watcher else 0)
            out[name] = {"root": str(w.root), "files": s.get("documents", 0), "chunks": s.get("chunks", 0),
                         "vectors": s.get("vectors", 0), "pending": pending, "busy": w.busy,
                         "last_sync": w.last_sync or s.get("last_indexed_at"),
                         "stale": pending > 0 or w.last_sync is None, "daemon": True, "pid": os.getpid(),
                         "polling": bool(self.watcher and self.watcher.polling)}
        return out


def serve(cfg: Config, reload_config=None, embedder=None) -> int:
    log.configure(cfg.log_level)
    return Daemon(cfg, embedder=embedder, reload_config=reload_config).run()


def reload_from(home, project, settings: dict):
    """A loader for SIGHUP that reads the config the way the command line first did."""
    return lambda: config_mod.load(home=home, project=project, **settings)
