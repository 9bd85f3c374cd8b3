"""The jobs a store's writer runs, and how a caller waiting on one gets its result back."""

from __future__ import annotations

import enum
import threading


class Job(str, enum.Enum):
    """Every change to a store's index, done by its writer thread alone (readers never write)."""

    ROOT = "root"  # look whether the root folder or index file was deleted or replaced
    PATHS = "paths"  # index these changed paths (watcher events, or a note just written by `add`)
    RECONCILE = "reconcile"  # bring the whole store in step with its notes (start-up, `index`, schedule)
    DECAY = "decay"
    CLEANUP = "cleanup"
    REBUILD = "rebuild"
    VERIFY = "verify"  # check, and with a true payload repair
    ACCESS = "access"  # count records handed to a caller (fire and forget)
    REINFORCE = "reinforce"  # one more restatement of a record (`add` of a twin)
    RETRY = "retry"  # the work a full disk or read-only store stopped (a reconcile finds all of it)
    CARRY = "carry"  # an updated memory keeps its old record's counters (`update`)


# jobs whose success shows the store takes writes again (a look at the root, a decay or counting
# pass that found nothing to change, a verify: none of them wrote)
PROVES_WRITES = (Job.PATHS, Job.RECONCILE, Job.RETRY, Job.REBUILD, Job.CLEANUP, Job.REINFORCE)


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
