"""`mdmem serve`: store locks, writer threads fed by the watcher, the scheduler and the socket."""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from pathlib import Path

from indexer import config as config_mod
from indexer import log
from indexer.daemon.lending import STARTED_PROJECT, MemoryPool
from indexer.daemon.writer_jobs import Serving
from indexer.config import Config
from indexer.providers import load_embedder
from indexer.errors import MdmemError, StoreError
from indexer.private_files import make_private_dirs, open_private
from indexer.roots import missing_store
from indexer.index import sql
from indexer.index.stores import identity, store_roots
from indexer.kept.owner import KeptCopies
from indexer.providers.rankers import Rankers
from indexer.daemon.jobs import Job, Reply
from indexer.store_jobs import store_status
from indexer.daemon.lock_file import LOCK_NAME, how_to_stop, stamp
from indexer.daemon.store_writer import StoreWriter

# glibc raises its mmap threshold to the largest block freed so far, after which a question's big buffers (the
# ranking model's activations, ~1.5 MB each) stay in the threads' heaps once freed: 20 questions of 100,000
# characters left the daemon's heap 20 MB bigger for good (malloc_trim gave back nothing). A fixed threshold
# hands every block over 256 KB back when freed: +2 MB after them, for +0.3 ms of CPU on a 16 ms search.
MMAP_THRESHOLD = 256 * 1024


def _bounded_heap() -> None:
    """Fix glibc's mmap threshold (M_MMAP_THRESHOLD, -3); another C library is left as it is."""
    import ctypes
    import ctypes.util
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt(-3, MMAP_THRESHOLD)
    except (OSError, AttributeError):
        pass


class StoreLock:
    """One daemon per store: an exclusive flock held for the daemon's lifetime."""

    def __init__(self, root: Path):
        self.path = Path(root) / LOCK_NAME
        self._fd = None

    def acquire(self) -> None:
        make_private_dirs(self.path.parent)
        fd = open_private(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").split()
            os.close(fd)
            raise StoreError(f"another `mdmem serve` (pid {holder[0] if holder else '?'}) already serves "
                             f"{self.path.parent}; stop it first ({how_to_stop(holder)}) or use it through "
                             f"`mdmem status`") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, stamp(), 0)
        self._fd = fd

    def intact(self) -> bool:
        """Whether the file we hold the lock on is still the one at the lock's path."""
        if self._fd is None:
            return False
        held = os.fstat(self._fd)
        return identity(self.path) == (held.st_dev, held.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock; the file stays (removing it would race)
            self._fd = None


class Daemon:
    """Everything `mdmem serve` runs; `run()` blocks until SIGTERM / SIGINT."""

    def __init__(self, cfg: Config, embedder=None, reload_config=None, http=None):
        self.cfg = cfg
        self._http_options = http  # (listen address, MCP server factory, allowed page origins) for `serve --http`
        self.http = None
        self._embedder = embedder
        self._reload_config = reload_config
        self.stopping = threading.Event()
        self.terminate = threading.Event()  # SIGTERM / SIGINT: index what the debounce holds, then stop
        self._reload = threading.Event()
        # by store key: "global", "project" (the one it was started with), "project@<root>" (taken on later)
        self.writers: dict[str, StoreWriter] = {}
        self.locks: list[StoreLock] = []
        self._adopting = threading.Lock()
        self.watcher = None
        self.scheduler = None
        self.server = None
        self.started_at = time.time()
        # the copies of each index kept in memory, handed to every store the daemon opens (made by run())
        self.kept = KeptCopies()
        # the configured ranking models, loaded once and shared by every Memory the daemon lends
        self.rankers = Rankers()
        self._log = log.get()
        # the Memory objects requests borrow, given only what they use of the daemon
        self.memories = MemoryPool(Serving(config=lambda: self.cfg, embedder=lambda: self._embedder,
                                           kept=lambda: self.kept,
                                           writer=lambda name, project: self.writers.get(self.key(name, project)),
                                           run_job=self.run_job, status=self.status, stopping=self.stopping,
                                           log=self._log, rankers=lambda: self.rankers))

    # -- lifecycle ------------------------------------------------------------------------------
    def run(self) -> int:
        from indexer.daemon.rpc import Server
        from indexer.daemon.scheduler import Scheduler
        from indexer.daemon.watcher import Watcher

        roots = store_roots(self.cfg)
        for _name, root in roots:
            lock = StoreLock(root)
            lock.acquire()  # before anything else: a second daemon leaves without touching a thing
            self.locks.append(lock)
        lock_of = {name: lock for (name, _root), lock in zip(roots, self.locks)}
        try:
            self._install_signals()
            _bounded_heap()
            self.kept = KeptCopies(keep=True)
            self._log.info("daemon_starting", pid=os.getpid(), stores={n: str(r) for n, r in roots})
            if self._embedder is None:
                self._embedder = load_embedder(self.cfg, fallback=True,
                                               warn=lambda m: self._log.warning("embedder_fallback", reason=m))
            self._warm_up()
            for name, root in roots:
                w = StoreWriter(name, root, self._embedder, self.cfg, self.stopping, lock=lock_of[name],
                                on_change=self._store_changed, kept=self.kept)
                w.start()
                w.ready.wait()
                if w.open_error is not None:
                    raise w.open_error
                self.writers[name] = w
            # watch first, reconcile second: edits made during the startup scan are not lost
            self.watcher = Watcher({n: w.root for n, w in self.writers.items()},
                                   {n: w.filter for n, w in self.writers.items()},
                                   self._on_paths, self.cfg.debounce_ms / 1000.0,
                                   on_ignore_changed=lambda n: self.writers[n].submit(Job.RECONCILE),
                                   on_lost=lambda n: self.writers[n].submit(Job.RECONCILE),
                                   on_root_event=lambda n: self.writers[n].submit(Job.ROOT))
            self.watcher.start()
            for w in self.writers.values():
                w.submit(Job.RECONCILE)
            with self.lend() as first:
                self.kept.warm(first.stores())  # one reader's connections and copies before the first request
            self.server = Server(self.cfg, self)
            self.server.start()
            if self._http_options is not None:
                from indexer.daemon.http import HttpServer
                self.http = HttpServer(self, *self._http_options)
                self.http.start()
            self.scheduler = Scheduler(self.cfg, self.enqueue_all)
            self.scheduler.start()
            self._log.info("daemon_ready", socket=str(self.server.path), polling=self.watcher.polling,
                           debounce_ms=self.cfg.debounce_ms, **{f"{k}_minutes": v for k, v in self.scheduler.intervals().items()})
            while not self.terminate.wait(1.0):
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
            self.terminate.set()

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
            w.submit(Job.RECONCILE)  # .mdmemignore or chunking settings may have changed
        self.watcher.debouncer.delay = cfg.debounce_ms / 1000.0
        self.scheduler.reload(cfg)
        self.memories.drain()
        self._log.info("config_reloaded", debounce_ms=cfg.debounce_ms, **{f"{k}_minutes": v for k, v in self.scheduler.intervals().items()})

    def _shutdown(self) -> None:
        if self.terminate.is_set() and self.watcher is not None:
            from indexer.daemon.last_saves import index_held
            index_held(self.watcher, self.writers, self._log)
        self.stopping.set()
        for part in (self.scheduler, self.http, self.watcher, self.server):
            if part is not None:
                try:
                    part.stop()
                except Exception as exc:
                    self._log.warning("stop_failed", part=type(part).__name__, error=str(exc))
        for w in self.writers.values():
            w.join(timeout=60)  # the current file is finished and committed, then the thread ends
        self.memories.drain()
        self.kept.drop()
        for lock in self.locks:
            lock.release()
        self._log.info("daemon_stopped")

    # -- the stores of each caller: the daemon's own, and projects it takes on when asked -----------------
    @property
    def own_project(self) -> Path | None:
        return self.cfg.project

    def key(self, name: str, project: Path | None) -> str:
        return name if name != "project" or project == self.cfg.project else f"project@{project}"

    def view(self, project: Path | None) -> list[tuple[str, StoreWriter]]:
        """(store name, writer) of the stores a caller working in `project` uses."""
        names = ["global"] + (["project"] if project is not None else [])
        return [(n, self.writers[self.key(n, project)]) for n in names if self.key(n, project) in self.writers]

    def adopt(self, project: Path | None) -> None:
        """Serve the project store of a caller this daemon was not started for: lock, writer, watch, reconcile.

        Without it a command run in another project found "no daemon" and wrote next to the daemon's
        writer in-process (1.1 s a command, the global store opened twice).
        """
        if project is None or self.key("project", project) in self.writers:
            return
        key = self.key("project", project)
        with self._adopting:
            if key in self.writers or self.stopping.is_set():
                return
            if not Path(project).is_dir():
                raise missing_store("project", Path(project))  # a usage error (exit 2), as without a daemon
            lock = StoreLock(project)
            lock.acquire()  # another daemon serving that project: its one-line refusal goes to the caller
            w = StoreWriter("project", project, self._embedder, self.cfg, self.stopping, lock=lock,
                            on_change=lambda _name, attached: self._store_changed(key, attached), kept=self.kept)
            w.start()
            w.ready.wait()
            if w.open_error is not None:
                lock.release()
                raise w.open_error
            self.locks.append(lock)
            self.writers[key] = w
            self.watcher.add(key, project, w.filter)
            w.submit(Job.RECONCILE)
            self._log.info("store_adopted", root=str(project))

    # -- work intake ----------------------------------------------------------------------------
    def _on_paths(self, name: str, paths: list[str]) -> None:
        self.writers[name].submit(Job.PATHS, paths)

    def enqueue_all(self, job: str) -> None:
        if job == "capture":  # its adds and forgets are writer jobs: run beside the writers, never on one
            threading.Thread(target=self.capture_pass, name="mdmem-capture", daemon=True).start()
            return
        for w in self.writers.values():
            w.submit(job)

    def capture_pass(self) -> dict | None:
        """The later extraction of turns the LLM failed on (capture/later.py); its figures are logged."""
        from indexer.capture.later import extract_pending
        try:
            with self.lend() as mem:
                out = extract_pending(mem)
        except MdmemError as exc:  # a store or model gone: the list stays for the next interval
            self._log.warning("capture_pass_failed", error=str(exc))
            return None
        if out["pending"] or any(out[k] for k in ("extracted", "failed", "given_up", "skipped")):
            self._log.info("capture_pass", **out)
        return out

    def _store_changed(self, name: str, attached: bool) -> None:
        """A writer detached from its vanished root or reopened a new one (called on its thread)."""
        if self.watcher is not None:
            if attached:
                self.watcher.rewatch(name)
            else:
                self.watcher.unwatch(name)
        self.memories.retire(wait=not attached)

    def run_job(self, job: str, scope: str = "all", payload=None, progress=None, project=None) -> list:
        """Queue a job on each writer of the scope and wait for the results (socket requests)."""
        replies = []
        for name, w in self.view(project):
            if w.missing is not None and scope == name:
                raise StoreError(f"the {name} store's root {w.root} is missing ({w.missing}); "
                                 f"create the folder again and the daemon indexes it")
            if scope in ("all", name) and w.missing is None:  # a missing root has nothing to decay or clean
                reply = Reply(progress)
                w.submit(job, payload, reply)
                replies.append((w, reply))
        return [r.wait(self.cfg.job_timeout_s, what=f"the {w.store_name} store's writer") for w, r in replies]

    # -- the Memory objects requests borrow (daemon/lending) ----------------------------------------------
    def lend(self, project=STARTED_PROJECT):
        """`with daemon.lend(project) as mem:` a Memory for one call (read-only connections, writes as jobs)."""
        return self.memories.lend(project)

    def reader(self, project=STARTED_PROJECT):
        """A Memory taken for good (the tests' reader); lend() gives one back after the call."""
        return self.memories.take(project)

    def status(self, project=None) -> dict:
        with self.lend(project) as mem:  # counts read without a pass over every chunk (stats: 1.8 s at 1M)
            stats = {st.name: {**sql.status_counts(st.con), "index": str(st.index_path)} for st in mem.stores("all")}
        out = {}
        for name, w in self.view(project):
            s = stats.get(name, {})
            pending = w.pending() + (self.watcher.pending(self.key(name, project)) if self.watcher else 0)
            out[name] = store_status(
                w.root, s, pending=pending, busy=w.busy, last_sync=w.last_sync,
                stale=pending > 0 or w.last_sync is None or w.missing is not None,
                daemon={"pid": os.getpid(), "polling": bool(self.watcher and self.watcher.polling), "missing": w.missing,
                        **self.kept.state(s.get("index"))})
        return out


def serve(cfg: Config, reload_config=None, embedder=None, http=None) -> int:
    log.configure(cfg.log_level)
    return Daemon(cfg, embedder=embedder, reload_config=reload_config, http=http).run()


def reload_from(home, project, settings: dict):
    """A loader for SIGHUP that reads the config the way the command line first did."""
    return lambda: config_mod.load(home=home, project=project, **settings)
