"""Which files below a store root are notes, and how to read one safely."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pathspec

from indexer.errors import NoteError

MAX_NOTE_BYTES = 20 * 1024 * 1024  # beyond this a "note" is almost surely not one


def is_temp_name(name: str) -> bool:
    """Editor scratch files: vim swap/probe, emacs lock/backup, atomic-save temps."""
    return (name.startswith((".", "~", "#")) or name.endswith(("~", ".swp", ".swx", ".tmp", ".bak", ".part"))
            or name == "4913" or ".tmp." in name or name.startswith("index.db"))


class NoteFilter:
    """Decides whether a path below one root is an indexable note (.mdmemignore respected)."""

    def __init__(self, root: Path, follow_symlinks: bool = False):
        self.root = Path(root)
        self.follow_symlinks = follow_symlinks
        self._spec = self._load_ignore()

    def _load_ignore(self):
        ignore = self.root / ".mdmemignore"
        try:
            lines = ignore.read_text(encoding="utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError, OSError):
            return None
        return pathspec.PathSpec.from_lines("gitignore", lines)

    def reload(self) -> None:
        self._spec = self._load_ignore()

    def uri_of(self, path: Path | str) -> str | None:
        """The note's uri, or None when the path is not an indexable note of this root."""
        try:
            rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root))
        except ValueError:
            return None
        parts = rel.parts
        if not parts or not parts[-1].endswith(".md") or is_temp_name(parts[-1]):
            return None
        if any(p.startswith(".") for p in parts[:-1]):
            return None
        uri = "/".join(parts)
        if not uri.isprintable() and not _encodable(uri):
            return None  # undecodable bytes in a name: SQLite stores UTF-8 only
        if self._spec is not None and self._spec.match_file(uri):
            return None
        return uri

    def walk(self, warn=None):
        """Yield (uri, path) of every note below the root, in a stable order (a folder's notes, then its
        folders, each sorted); warn(message) about notes that are skipped for a reason the user can fix.

        One directory read a folder and no path objects until a note is found: at 200k notes a walk
        through os.walk and uri_of cost 120 us a note, most of it building and comparing paths."""
        root = os.path.abspath(self.root)
        if not os.path.isdir(root):
            return
        stack = [(root, "")]
        while stack:
            folder, rel = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            below = []
            for e in entries:
                try:
                    is_dir = e.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not e.name.startswith(".") and not e.is_symlink():  # os.walk's followlinks=False
                        below.append((e.path, f"{rel}{e.name}/"))
                    continue
                uri = self._uri_in(rel, e.name)
                if uri is not None:
                    if _is_file(e) and (not e.is_symlink() or self.admits(e.path)):
                        yield uri, Path(e.path)
                elif warn and (why := self.why_skipped(e.path)):
                    warn(why)
            stack.extend(reversed(below))

    def _uri_in(self, rel: str, name: str) -> str | None:
        """uri_of for a name in a folder already known to lie below the root outside dot-folders."""
        if not name.endswith(".md") or is_temp_name(name):
            return None
        uri = rel + name
        if not uri.isprintable() and not _encodable(uri):
            return None
        if self._spec is not None and self._spec.match_file(uri):
            return None
        return uri

    def why_skipped(self, path: Path | str) -> str | None:
        """The message for a note the user meant to index but that cannot be, or None."""
        name = os.fspath(path)
        if name.endswith(".md") and not _encodable(name):
            shown = os.fsencode(name).decode("utf-8", "replace")
            return f"{shown}: skipped, its name is not valid UTF-8; rename the file to index it"
        return None

    def admits(self, path: Path | str) -> bool:
        """A symlinked note must point inside the root unless follow_symlinks is set: a link
        must not pull a private file from elsewhere into the index."""
        path = Path(path)
        if self.follow_symlinks or not path.is_symlink():
            return True
        try:
            target = path.resolve(strict=True)
            target.relative_to(self.root.resolve())
        except (OSError, RuntimeError, ValueError):
            return False
        return True


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a link in a loop: Path.is_file says False too
        return False


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode_note(data: bytes, uri: str) -> str:
    """UTF-8 (BOM or not) or UTF-16 with a BOM; anything else is refused with a fix."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data:  # checked first: binary data would otherwise get the encoding advice
        raise NoteError(f"{uri}: contains NUL bytes, looks binary; rename it away from .md or fix it")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NoteError(f"{uri}: not UTF-8 text (byte {exc.start}); convert it, e.g. `iconv -f GBK -t UTF-8`") from exc


_TOO_BIG = f"is over the {MAX_NOTE_BYTES} byte note limit; split it or add it to .mdmemignore"


def read_note(path: Path, uri: str) -> tuple[bytes, os.stat_result]:
    try:
        # O_NONBLOCK and the fstat of what was opened: a name swapped for a FIFO or a device after the
        # walk must not block or flood the reader
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NoteError(f"{uri}: is not a regular file; only plain files are read as notes")
            if st.st_size > MAX_NOTE_BYTES:
                raise NoteError(f"{uri}: {st.st_size} bytes {_TOO_BIG}")
            data = f.read(MAX_NOTE_BYTES + 1)  # a file that grows while read stops at the limit
            if len(data) > MAX_NOTE_BYTES:
                raise NoteError(f"{uri}: grew while being read and {_TOO_BIG}")
    except PermissionError as exc:
        raise NoteError(f"{uri}: cannot read ({exc.strerror}); fix its permissions, e.g. `chmod u+r`") from exc
    except IsADirectoryError as exc:
        raise NoteError(f"{uri}: is a folder, not a note") from exc
    except OSError as exc:
        raise NoteError(f"{uri}: cannot read ({exc.strerror or exc})") from exc
    return data, st
