"""On SIGTERM: index the saves the debounce still holds, within a few seconds, before the daemon exits."""

from __future__ import annotations

import time

from indexer.daemon.jobs import Job

HELD_BUDGET_S = 5.0  # systemd waits 90 s for a stop; a save is worth a few of them, a stuck model is not


def index_held(watcher, writers: dict, log, budget_s: float = HELD_BUDGET_S) -> int:
    """Give each store's writer the paths saved less than the debounce ago and wait (bounded) until the
    writers are idle; returns how many paths were handed over. What is left, the next start reconciles."""
    held = watcher.take_held()
    count = 0
    for name, paths in held.items():
        if paths and name in writers:
            writers[name].submit(Job.PATHS, paths)
            count += len(paths)
    if not count:
        return 0
    deadline = time.monotonic() + budget_s
    while any(w.pending() for w in writers.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = sum(w.pending() for w in writers.values())
    log.info("held_saves_indexed", paths=count, unfinished_jobs=left, budget_s=budget_s)
    return count
