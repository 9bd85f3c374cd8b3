"""Periodic jobs of the daemon: at each job's interval the scheduler enqueues it on the writers, and does no more."""

from __future__ import annotations

import threading
import time
from typing import Callable

from indexer import log
from indexer.config import Config

JOBS = ("reconcile", "decay", "cleanup", "consolidate", "capture")


class Scheduler:
    """reconcile / decay / cleanup / consolidate / capture at the configured intervals, each calling enqueue(job_name).

    `clock` gives seconds (monotonic: a clock set back or forward moves no job); a test passes its own and
    calls `run_due()` instead of waiting. A job late by several intervals (a stopped process, a suspend) runs
    once, then keeps its interval from then: missed runs never stack up."""

    def __init__(self, cfg: Config, enqueue: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self._enqueue = enqueue
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Event()  # set by reload and stop: the loop computes its wait again
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._set(cfg)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="mdmem-scheduler", daemon=True)
        self._thread.start()

    def reload(self, cfg: Config) -> None:
        """New intervals after SIGHUP; each job's clock restarts from now."""
        self._set(cfg)
        self._changed.set()

    def intervals(self) -> dict[str, float]:
        return {name: _minutes(self._cfg, name) for name in JOBS}

    def stop(self) -> None:
        self._stopped = True
        self._changed.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def run_due(self) -> list[str]:
        """Enqueue every job whose time has come by the clock; the names enqueued, in JOBS order."""
        now = self._clock()
        with self._lock:
            due = [name for name in JOBS if self._due[name] <= now]
            for name in due:
                self._due[name] = now + 60.0 * _minutes(self._cfg, name)
        for name in due:
            try:
                self._enqueue(name)
            except Exception as exc:  # a writer shutting down: the next interval asks again
                log.get("mdmem.scheduler").warning("job_not_enqueued", job=name, error=str(exc))
        return due

    def next_in(self) -> float:
        """Seconds until the next job is due by the clock (0 when one is due now)."""
        with self._lock:
            return max(0.0, min(self._due.values()) - self._clock())

    def _set(self, cfg: Config) -> None:
        now = self._clock()
        with self._lock:
            self._cfg = cfg
            self._due = {name: now + 60.0 * _minutes(cfg, name) for name in JOBS}

    def _loop(self) -> None:
        while not self._stopped:
            self._changed.wait(self.next_in())
            self._changed.clear()
            if not self._stopped:
                self.run_due()


def _minutes(cfg: Config, name: str) -> float:
    return float(getattr(cfg, f"{name}_minutes"))
