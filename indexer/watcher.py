"""Filesystem events of the store roots, debounced per path (the only module importing watchdog)."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from . import log
from .scanner import NoteFilter

# inotify watches, file descriptors or the system file table ran out: polling is the way on
_OUT_OF_WATCHES = {errno.ENOSPC, errno.EMFILE, errno.ENFILE}
_IGNORED_EVENTS = {"opened", "closed_no_write"}
POLL_SECONDS = 1.0


class Debouncer:
    """Calls flush(key, paths) once a path has been quiet for `delay` seconds.

    Editors touch a file several times per save (truncate, write, chmod, rename); waiting
    for quiet turns those into one reindex of the final content.
    """

    def __init__(self, delay: float, flush):
        self.delay = delay
        self._flush = flush
        self._due: dict[tuple[str, str], float] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="mdmem-debounce", daemon=True)
        self._thread.start()

    def hit(self, key: str, path: str) -> None:
        with self._cond:
            self._due[(key, path)] = time.monotonic() + self.delay
            self._cond.notify()

    def pending(self, key: str | None = None) -> int:
        with self._cond:
            return sum(1 for k, _p in self._due if key is None or k == key)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                now = time.monotonic()
                ripe = [kp for kp, due in self._due.items() if due <= now]
                for kp in ripe:
                    del self._due[kp]
                if not ripe:
                    wait = min(self._due.values(), default=now + 3600) - now
                    self._cond.wait(timeout=max(0.005, wait))
                    continue
            by_key: dict[str, list[str]] = {}
            for key, path in ripe:
                by_key.setdefault(key, []).append(path)
            for key, paths in by_key.items():
                try:
                    self._flush(key, sorted(paths))
                except Exception:  # a failing consumer must not kill the debounce thread
                    log.get().exception("debounce_flush_failed", store=key)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: "Watcher", name: str):
        self.watcher = watcher
        self.name = name

    def on_any_event(self, event) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self.watcher.consider(self.name, os.fsdecode(path), event.is_directory, event.event_type)


class Watcher:
    """Watches each root recursively; relevant paths reach on_paths(store, paths) after the debounce.

    Events are hints: the consumer re-reads each path's current state, so a lost or
    reordered event costs at most staleness until the next reconcile, never a wrong index.
    """

    def __init__(self, roots: dict[str, Path], filters: dict[str, NoteFilter], on_paths, debounce_s: float,
                 on_ignore_changed=None, observer_factory=Observer):
        self.roots = {k: Path(v) for k, v in roots.items()}
        self.filters = filters
        self.on_ignore_changed = on_ignore_changed
        self.debouncer = Debouncer(debounce_s, on_paths)
        self._factory = observer_factory
        self._observer = None
        self.polling = False
        self._log = log.get()

    def start(self) -> None:
        try:
            self._observer = self._start(self._factory)
        except OSError as exc:
            if exc.errno not in _OUT_OF_WATCHES:
                raise
            self._fall_back(exc)

    def check(self) -> None:
        """Called periodically: a native observer that died (e.g. watches ran out later) is replaced once."""
        if self.polling or self._observer is None:
            return
        emitters = list(getattr(self._observer, "emitters", ()))
        if not self._observer.is_alive() or any(not e.is_alive() for e in emitters):
            self._fall_back(None)

    def _start(self, factory):
        observer = factory()
        handler_roots = []
        try:
            for name, root in self.roots.items():
                observer.schedule(_Handler(self, name), str(root), recursive=True)
                handler_roots.append(name)
            observer.start()
        except BaseException:
            _stop_quietly(observer)
            raise
        return observer

    def _fall_back(self, exc) -> None:
        # logged once; polling never needs watches, so there is nothing to retry in a loop
        self._log.warning("watch_fallback_polling", reason=str(exc) if exc else "native observer stopped",
                          poll_seconds=POLL_SECONDS)
        if self._observer is not None:
            _stop_quietly(self._observer)
        self.polling = True
        self._observer = self._start(lambda: PollingObserver(timeout=POLL_SECONDS))

    def stop(self) -> None:
        if self._observer is not None:
            _stop_quietly(self._observer)
        self.debouncer.stop()

    def pending(self, name: str | None = None) -> int:
        return self.debouncer.pending(name)

    def consider(self, name: str, path: str, is_directory: bool, event_type: str) -> None:
        root = self.roots[name]
        try:
            rel = Path(path).relative_to(root)
        except ValueError:
            return  # a move out of the root still gives us its source path, which is inside
        if not rel.parts:
            return
        if rel.parts == (".mdmemignore",):
            self.filters[name].reload()
            if self.on_ignore_changed:
                self.on_ignore_changed(name)
            return
        if is_directory:
            # created or moved-in folders bring files without their own events; deleted or
            # moved-out folders take them away: the consumer expands the folder either way
            if event_type != "modified" and not any(p.startswith(".") for p in rel.parts):
                self.debouncer.hit(name, path)
            return
        if self.filters[name].uri_of(path) is not None:
            self.debouncer.hit(name, path)


def _stop_quietly(observer) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:
        pass
