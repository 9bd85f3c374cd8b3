"""One store's single writer thread: indexes watched paths and runs reconcile, decay, cleanup, rebuild."""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import asdict
from pathlib import Path

from . import log, store
from .config import Config
from .errors import MdmemError
from .passes import cleanup_store, decay_store
from .rebuild import rebuild_store
from .scanner import NoteFilter
from .stores import Store, open_store
from .sync import index_paths, sync_store


class Stopping(Exception):
    """Raised inside long work when a stop was requested, between committed files."""


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
            self._st = open_store(self.store_name, self.root, self.embedder, follow_symlinks=self.cfg.follow_symlinks)
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
            self._st = open_store(self.store_name, self.root, self.embedder, follow_symlinks=self.cfg.follow_symlinks)
        self.last_sync = time.time()
        self._log.info("rebuilt", files=rep.indexed, chunks=rep.chunks_added, embedded=rep.embedded,
                       seconds=round(rep.seconds, 3))
        return asdict(rep)

    def _warn(self, message: str) -> None:
        self._log.warning("note_skipped", reason=message)
