"""Private by default: files mdmem writes that hold memory text, tokens or history are 0600, folders it makes 0700."""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_private_dirs(folder) -> list[Path]:
    """Create folder and its missing parents 0700 whatever the umask; returns those created (outermost first).

    A folder that exists keeps its mode: a user's own folder is never loosened or tightened.
    """
    folder = Path(folder)
    missing = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    made = []
    for new in reversed(missing):
        try:
            new.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not new.is_dir():
                raise  # a file where the folder should be: the caller names it
            continue  # another process made it meanwhile: theirs, as they made it
        os.chmod(new, DIR_MODE)  # mkdir's mode passes through the umask; a 0277 umask would leave 0500
        made.append(new)
    return made


def open_private(path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor on one of mdmem's own files (history, locks, derived index files), created 0600; one found
    readable by others (made by an older release) is made 0600 again."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_private(path) -> None:
    """An empty file of mdmem's own, 0600, for a writer that opens the path itself (numpy, faiss): truncating
    keeps the mode, so its bytes are never readable by others, not even while being written."""
    os.close(open_private(path, os.O_WRONLY | os.O_TRUNC))
