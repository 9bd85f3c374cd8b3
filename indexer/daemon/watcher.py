"""Filesystem events of the store roots, debounced per path (the only module importing watchdog)."""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from pathlib import Path

from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileAttribEvent, FileClosedEvent,
                             FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent,
                             FileSystemEventHandler)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from indexer import log
from indexer.notes.scanner import NoteFilter
from indexer.index.stores import identity

# inotify watches, file descriptors or the system file table ran out: polling is the way on
_OUT_OF_WATCHES = {errno.ENOSPC, errno.EMFILE, errno.ENFILE}
_IGNORED_EVENTS = {"opened", "closed_no_write"}
# only what can change a note: without opens and reads (the indexer's own reads of every file
# among them) the kernel queue holds several times more real changes before it overflows
_EVENTS = [FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent, FileMovedEvent, DirMovedEvent,
           FileModifiedEvent, FileAttribEvent, FileClosedEvent]
POLL_SECONDS = 1.0
LOST = ""  # debounced like a path; stands for "events of this root were lost, reconcile it"


class Debouncer:
    """Calls flush(key, paths) once a path has been quiet for `delay` seconds.

    Editors touch a file several times per save (truncate, write, chmod, rename); waiting
    for quiet turns those into one reindex of the final content.
    """

    def __init__(self, delay: float, flush, clock=time.monotonic, start: bool = True):
        self.delay = delay
        self._flush = flush
        self._clock = clock  # a test hands its own and calls flush_ripe() instead of starting the thread
        self._due: dict[tuple[str, str], float] = {}
        self._wake_at = float("inf")  # when the thread wakes next on its own
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="mdmem-debounce", daemon=True)
        if start:
            self._thread.start()

    def hit(self, key: str, path: str) -> None:
        due = self._clock() + self.delay
        with self._cond:
            self._due[(key, path)] = due
            # waking the thread for a hit due after the one it waits for would rescan every
            # waiting path once per event: quadratic in a 10k-file burst
            if due < self._wake_at:
                self._wake_at = due
                self._cond.notify()

    def pending(self, key: str | None = None) -> int:
        with self._cond:
            return sum(1 for k, _p in self._due if key is None or k == key)

    def take_all(self) -> dict[str, list[str]]:
        """Every path still waiting for quiet, by key, now; they are forgotten here."""
        with self._cond:
            held, self._due = list(self._due), {}
        out: dict[str, list[str]] = {}
        for key, path in held:
            out.setdefault(key, []).append(path)
        return {key: sorted(paths) for key, paths in out.items()}

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def flush_ripe(self) -> int:
        """Flush the paths quiet for `delay` by the clock now (what the thread does each time it wakes)."""
        with self._cond:
            ripe = self._take_ripe(self._clock())
        self._flush_all(ripe)
        return len(ripe)

    def _take_ripe(self, now: float) -> list[tuple[str, str]]:
        ripe = [kp for kp, due in self._due.items() if due <= now]
        for kp in ripe:
            del self._due[kp]
        return ripe

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                now = self._clock()
                ripe = self._take_ripe(now)
                if not ripe:
                    self._wake_at = min(self._due.values(), default=now + 3600)
                    self._cond.wait(timeout=max(0.005, self._wake_at - now))
                    self._wake_at = float("inf")
                    continue
            self._flush_all(ripe)

    def _flush_all(self, ripe: list[tuple[str, str]]) -> None:
        by_key: dict[str, list[str]] = {}
        for key, path in ripe:
            by_key.setdefault(key, []).append(path)
        for key, paths in by_key.items():
            try:
                self._flush(key, sorted(paths))
            except Exception:  # a failing consumer must not kill the debounce thread
                log.get().exception("debounce_flush_failed", store=key)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: "Watcher", name: str, watched: str, root: str):
        self.watcher = watcher
        self.name = name
        self.watched, self.root = watched, root  # a root that is a link is watched at its target

    def on_any_event(self, event) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                path = os.fsdecode(path)
                if self.watched != self.root and (path + "/").startswith(self.watched + "/"):
                    path = self.root + path[len(self.watched):]
                self.watcher.consider(self.name, path, event.is_directory, event.event_type)


class Watcher:
    """Watches each root recursively; relevant paths reach on_paths(store, paths) after the debounce.

    Events are hints: the consumer re-reads each path's current state, so a lost or
    reordered event costs at most staleness until the next reconcile, never a wrong index.
    When the kernel drops events (queue overflow) on_lost(store) asks for that reconcile now;
    a root deleted under us reaches on_root_event(store), and rewatch(store) follows a new one.
    """

    def __init__(self, roots: dict[str, Path], filters: dict[str, NoteFilter], on_paths, debounce_s: float,
                 on_ignore_changed=None, on_lost=None, on_root_event=None, observer_factory=Observer):
        self.roots = {k: Path(v) for k, v in roots.items()}
        self.filters = filters
        self.on_ignore_changed = on_ignore_changed
        self.on_lost = on_lost
        self.on_root_event = on_root_event
        self._on_paths = on_paths
        self.debouncer = Debouncer(debounce_s, self._flush)
        self._factory = observer_factory
        self._observer = None
        self._watches: dict[str, tuple] = {}  # store -> (watch, identity of the folder it watches)
        self._lock = threading.RLock()
        self._overflow_hook = _OverflowHook(self)
        self._lost: set[str] = set()
        self.polling = False
        self._log = log.get()

    def start(self) -> None:
        logging.getLogger("watchdog").addHandler(self._overflow_hook)
        try:
            self._observer = self._start(self._factory)
        except OSError as exc:
            if exc.errno not in _OUT_OF_WATCHES:
                raise
            self._fall_back(exc)

    def check(self) -> None:
        """Called periodically: a native observer that died (e.g. watches ran out later) is replaced once.

        The emitter of a root that was deleted or replaced stops by design; that is no failure
        of the observer, and rewatch() replaces it once the store is back.
        """
        if self.polling or self._observer is None:
            return
        with self._lock:
            live = [w for name, (w, ident) in self._watches.items() if identity(self.roots[name], True) == ident]
            emitters = list(getattr(self._observer, "emitters", ()))
            failed = [e for e in emitters if not e.is_alive() and getattr(e, "watch", None) in live]
            if not self._observer.is_alive() or failed:
                self._fall_back(None)

    def add(self, name: str, root: Path, note_filter: NoteFilter) -> None:
        """Watch one more store's root (a project the daemon takes on while it runs)."""
        with self._lock:
            self.roots[name] = Path(root)
            self.filters[name] = note_filter
        self.rewatch(name)

    def rewatch(self, name: str) -> None:
        """Watch the folder now at the store's root (after it was deleted and created again)."""
        with self._lock:
            self.unwatch(name)
            try:
                self._schedule(self._observer, name)
            except OSError as exc:
                if exc.errno not in _OUT_OF_WATCHES:
                    raise
                self._fall_back(exc)

    def unwatch(self, name: str) -> None:
        with self._lock:
            watch, _ident = self._watches.pop(name, (None, None))
            if watch is not None and self._observer is not None:
                try:
                    self._observer.unschedule(watch)
                except (KeyError, OSError):
                    pass  # already gone with its folder

    def _start(self, factory):
        observer = factory()
        try:
            for name in self.roots:
                self._schedule(observer, name)
            observer.start()
        except BaseException:
            _stop_quietly(observer)
            raise
        return observer

    def _schedule(self, observer, name: str) -> None:
        root = self.roots[name]
        ident = identity(root, True)
        if ident is None:
            self._watches.pop(name, None)
            return  # nothing to watch until the folder is back
        # inotify does not follow a root that is a symlink (it would watch the link), so watch its target
        watched = os.path.realpath(root)
        watch = observer.schedule(_Handler(self, name, watched, str(root)), watched, recursive=True,
                                  event_filter=_EVENTS)
        self._watches[name] = (watch, ident)

    def _fall_back(self, exc) -> None:
        # logged once; polling never needs watches, so there is nothing to retry in a loop
        self._log.warning("watch_fallback_polling", reason=str(exc) if exc else "native observer stopped",
                          poll_seconds=POLL_SECONDS)
        with self._lock:
            if self._observer is not None:
                _stop_quietly(self._observer)
            self.polling = True
            self._observer = self._start(lambda: PollingObserver(timeout=POLL_SECONDS))

    def stop(self) -> None:
        logging.getLogger("watchdog").removeHandler(self._overflow_hook)
        if self._observer is not None:
            _stop_quietly(self._observer)
        self.debouncer.stop()

    def pending(self, name: str | None = None) -> int:
        return self.debouncer.pending(name)

    def take_held(self) -> dict[str, list[str]]:
        """Stop watching and hand over the saves the debounce still holds, by store (for a last index)."""
        if self._observer is not None:
            _stop_quietly(self._observer)
        held = self.debouncer.take_all()
        return {name: [p for p in paths if p != LOST] for name, paths in held.items()}

    def lost_events(self) -> None:
        """The kernel dropped events of every watch: each store is reconciled once things are quiet."""
        if not self._lost:  # once per burst, however often the queue overflows in it
            self._log.warning("watch_overflow", action="reconcile every store once the burst is over")
        self._lost.update(self.roots)
        for name in self.roots:
            self.debouncer.hit(name, LOST)

    def _flush(self, name: str, paths: list[str]) -> None:
        if LOST in paths:
            self._lost.discard(name)
            paths = [p for p in paths if p != LOST]
            if self.on_lost:
                self.on_lost(name)
        if paths:
            self._on_paths(name, paths)

    def consider(self, name: str, path: str, is_directory: bool, event_type: str) -> None:
        root = self.roots[name]
        try:
            rel = Path(path).relative_to(root)
        except ValueError:
            return  # a move out of the root still gives us its source path, which is inside
        if not rel.parts:
            if event_type in ("deleted", "moved") and self.on_root_event:
                self.on_root_event(name)  # the root itself went away; its emitter has stopped
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


class _OverflowHook(logging.Handler):
    """watchdog reports a kernel queue overflow only as a log record; this turns it into lost_events()."""

    def __init__(self, watcher: Watcher):
        super().__init__(level=logging.WARNING)
        self.watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in record.getMessage().lower():
                self.watcher.lost_events()
        except Exception:  # a logging handler must never raise into watchdog's reader thread
            pass


def _stop_quietly(observer) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:
        pass
