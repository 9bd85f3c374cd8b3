"""The daemon's lock file, read from outside: which pid serves a store and whether systemd started it."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "index.db.lock"  # "index.db*" names are never notes, so the watcher ignores it


def stamp() -> bytes:
    """What a daemon writes into the lock it holds: its pid, and " systemd" when systemd started it (systemd
    sets INVOCATION_ID for its services), for the advice a second `serve` or `mdmem stop` gives."""
    return (f"{os.getpid()}" + (" systemd" if os.environ.get("INVOCATION_ID") else "")).encode()


def by_systemd(words: list[str]) -> bool:
    """Whether the lock's holder was started by systemd: its stamp says so, or (a lock written by an older
    release) its environment does."""
    if "systemd" in words[1:]:
        return True
    if not words or not words[0].isdigit():
        return False
    try:
        return b"\0INVOCATION_ID=" in b"\0" + Path(f"/proc/{words[0]}/environ").read_bytes()
    except OSError:
        return False  # gone meanwhile, or not ours to read


def holder(root: Path) -> list[str] | None:
    """The stamp of the daemon holding root's lock ([] when unreadable), or None when no daemon holds it."""
    try:
        fd = os.open(Path(root) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 64, 0).decode(errors="replace").split()
        fcntl.flock(fd, fcntl.LOCK_UN)  # nobody held it: no daemon
        return None
    finally:
        os.close(fd)


def how_to_stop(words: list[str]) -> str:
    """`systemctl --user stop mdmem` only for a daemon systemd started, else `kill PID`."""
    pid = words[0] if words and words[0].isdigit() else None
    if by_systemd(words):
        return "`systemctl --user stop mdmem`"
    return f"`kill {pid}`" if pid else "stop the other `mdmem serve`"
