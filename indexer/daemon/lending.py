"""The daemon's `Memory` objects, lent for one call at a time: read-only connections pooled per project,
writes handed to the stores' writers, retired when a store's file is replaced or the config reloads."""

from __future__ import annotations

import queue
import time
from contextlib import contextmanager

from indexer.daemon.writer_jobs import DaemonWriter
from indexer.index.stores import identity
from indexer.memory import Memory

OWN = object()  # the stores the daemon was started with


class Lender:
    """One idle pool per project; a borrowed Memory serves one thread until it is given back."""

    def __init__(self, daemon):
        self._daemon = daemon
        self._idle: dict = {}  # project root (None: none) -> LifoQueue of idle Memory objects of that view
        self._generation = 0  # bumped when a store is detached or reopened: older Memory objects hold stale files
        self._lent: dict[int, tuple] = {}  # id(mem) -> (project, config it was made under, generation)

    @contextmanager
    def lend(self, project=OWN):
        mem = self.take(project)
        try:
            yield mem
        finally:
            self.give_back(mem)

    def take(self, project=OWN) -> Memory:
        """A Memory with its own connections for the stores of a caller in `project` (None: the global
        store alone; by default the daemon's own), used by one request thread at a time."""
        d = self._daemon
        if project is OWN:
            project = d.cfg.project
        try:
            return self._idle.setdefault(project, queue.LifoQueue()).get_nowait()
        except queue.Empty:
            pass
        cfg = d.cfg if project == d.cfg.project else d.cfg.with_(project=project)
        mem = Memory(cfg=cfg, read_only=True, writer=DaemonWriter(d, project), embedder=d.embedder, kept=d.kept,
                     available=lambda name: self._open_store(name, project),
                     warn=lambda m: d.log.warning("search_warning", reason=m))
        self._lent[id(mem)] = (project, d.cfg, self._generation)
        return mem

    def _open_store(self, name: str, project) -> bool:
        w = self._daemon.writers.get(self._daemon.key(name, project))
        # never open (and so create) a root the writer found missing: searches of it find nothing
        return w is None or (w.missing is None and identity(w.root, folder=True) is not None)

    def give_back(self, mem: Memory) -> None:
        project, cfg, generation = self._lent.get(id(mem), (None, None, -1))
        if cfg is self._daemon.cfg and generation == self._generation and not self._daemon.stopping.is_set():
            self._idle.setdefault(project, queue.LifoQueue()).put(mem)
        else:
            self._lent.pop(id(mem), None)
            mem.close()

    def drain(self) -> None:
        """Close every idle Memory (the ones lent out close when given back, if retired)."""
        for pool in list(self._idle.values()):
            while True:
                try:
                    mem = pool.get_nowait()
                except queue.Empty:
                    break
                self._lent.pop(id(mem), None)
                mem.close()

    def retire(self, wait: bool, timeout: float = 30.0) -> None:
        """A store's file was detached or reopened: no Memory made before now is lent again. With wait, return
        once searches still running on the old file have given theirs back (and closed it).

        The last connection to close an index deletes `index.db-wal` and `-shm` by name: closed
        after a new index exists at the same path, it would take the new index's files away.
        """
        self._generation += 1
        self.drain()
        deadline = time.monotonic() + timeout
        while wait and any(g < self._generation for _p, _c, g in list(self._lent.values())) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
