"""The daemon's `Memory` objects, lent for one call at a time: read-only connections pooled per project,
writes handed to the stores' writers, retired when a store's file is replaced or the config reloads."""

from __future__ import annotations

import queue
import threading
import time
from contextlib import contextmanager

from indexer.daemon.writer_jobs import DaemonWriter, Serving
from indexer.index.stores import identity
from indexer.memory import Memory

STARTED_PROJECT = object()  # a caller's project left out: the project the daemon was started with


class MemoryPool:
    """One idle pool per project; a borrowed Memory serves one thread until it is given back."""

    def __init__(self, serving: Serving):
        self._serving = serving
        self._idle: dict = {}  # project root (None: none) -> LifoQueue of idle Memory objects of that view
        self._generation = 0  # bumped when a store is detached or reopened: older Memory objects hold stale files
        self._lent: dict[int, tuple] = {}  # id(mem) -> (project, config it was made under, generation)
        # request threads take and give back while writer threads retire: the generation, and the check that a
        # Memory is current with putting it back, change under this lock (a bump between them went unseen)
        self._lock = threading.Lock()

    @contextmanager
    def lend(self, project=STARTED_PROJECT):
        mem = self.take(project)
        try:
            yield mem
        finally:
            self.give_back(mem)

    def take(self, project=STARTED_PROJECT) -> Memory:
        """A Memory with its own connections for the stores of a caller in `project` (None: the global
        store alone; by default the daemon's own), used by one request thread at a time."""
        s = self._serving
        cfg_now = s.config()
        if project is STARTED_PROJECT:
            project = cfg_now.project
        idle = self._idle.setdefault(project, queue.LifoQueue())
        while True:
            try:
                mem = idle.get_nowait()
            except queue.Empty:
                break
            with self._lock:  # put back just before a retire that has not drained yet: closed, not lent
                fresh = self._lent.get(id(mem), (None, None, -1))[2] == self._generation
                if not fresh:
                    self._lent.pop(id(mem), None)
            if fresh:
                return mem
            mem.close()
        with self._lock:
            generation = self._generation  # read before it opens anything: a retire from now on covers it
        cfg = cfg_now if project == cfg_now.project else cfg_now.with_(project=project)
        mem = Memory(cfg=cfg, read_only=True, writer=DaemonWriter(s, project), embedder=s.embedder(), kept=s.kept(),
                     rankers=s.rankers(),
                     available=lambda name: self._open_store(name, project),
                     warn=lambda m: s.log.warning("search_warning", reason=m))
        with self._lock:
            self._lent[id(mem)] = (project, cfg_now, generation)
        return mem

    def _open_store(self, name: str, project) -> bool:
        w = self._serving.writer(name, project)
        # never open (and so create) a root the writer found missing: searches of it find nothing
        return w is None or (w.missing is None and identity(w.root, folder=True) is not None)

    def give_back(self, mem: Memory) -> None:
        with self._lock:
            project, cfg, generation = self._lent.get(id(mem), (None, None, -1))
            current = (cfg is self._serving.config() and generation == self._generation
                       and not self._serving.stopping.is_set())
            if current:
                self._idle.setdefault(project, queue.LifoQueue()).put(mem)
            else:
                self._lent.pop(id(mem), None)
        if not current:
            mem.close()

    def drain(self) -> None:
        """Close every idle Memory (the ones lent out close when given back, if retired)."""
        for pool in list(self._idle.values()):
            while True:
                try:
                    mem = pool.get_nowait()
                except queue.Empty:
                    break
                with self._lock:
                    self._lent.pop(id(mem), None)
                mem.close()

    def retire(self, wait: bool, timeout: float = 30.0) -> None:
        """A store's file was detached or reopened: no Memory made before now is lent again. With wait, return
        once searches still running on the old file have given theirs back (and closed it).

        The last connection to close an index deletes `index.db-wal` and `-shm` by name: closed
        after a new index exists at the same path, it would take the new index's files away.
        """
        with self._lock:
            self._generation += 1
            generation = self._generation
        self.drain()
        deadline = time.monotonic() + timeout
        while wait and self._older_lent(generation) and time.monotonic() < deadline:
            time.sleep(0.01)

    def _older_lent(self, generation: int) -> bool:
        with self._lock:
            return any(g < generation for _p, _c, g in self._lent.values())
