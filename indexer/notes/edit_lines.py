"""Replace or remove exact line ranges of a note, under the same lock and atomic swap as appending."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import ConflictError, NoteBusyError, NoteError, for_os_error
from indexer.notes.append import ATTEMPTS, VERIFY_DELAY_S, Target, note_lock, read_bytes, swap_bytes_in

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class LineEdit:
    """Lines start..end (1-based, inclusive) that must still read `expect`; `new` replaces them (None: removed)."""

    start: int
    end: int
    expect: str
    new: str | None = None


def note_target(store: str, root: Path, uri: str) -> Target:
    return Target(store=store, root=Path(root), uri=uri, path=Path(root) / uri, title="")


def range_text(lines: list[str], start: int, end: int) -> str:
    """The text of lines start..end as the chunker stores it (joined by newlines, trailing space dropped)."""
    return "\n".join(lines[start - 1:end]).rstrip()


def note_lines(data: bytes) -> list[str]:
    """A note's lines without their endings, numbered as the chunker numbers them."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    return [ln.rstrip(b"\r\n").decode("utf-8", "replace") for ln in data.splitlines(keepends=True)] or [""]


def edit_lines(target: Target, edits: list[LineEdit]) -> bytes:
    """Apply every edit in one atomic swap; ConflictError when a range no longer holds its expected text.

    An editor's save between our read and our swap is kept: the edits are applied again on top
    of it, as long as the lines they change still read what the caller saw. A full disk, a
    read-only store or a refused write leaves the note as it was and says so in one line.
    """
    try:
        return _edit_lines(target, edits)
    except OSError as exc:
        raise for_os_error(exc, target.path) from exc


def _edit_lines(target: Target, edits: list[LineEdit]) -> bytes:
    ordered = sorted(edits, key=lambda e: e.start)
    for a, b in zip(ordered, ordered[1:]):
        if b.start <= a.end:
            raise NoteError(f"{target.uri}: lines {a.start}-{a.end} and {b.start}-{b.end} overlap; edit them once")
    with note_lock(target):
        base = expect = read_bytes(target.path)
        for _ in range(ATTEMPTS):
            new = apply_edits(target.uri, base, ordered)
            done, expect, base = swap_bytes_in(target.path, new, expect, base)
            if not done:
                continue  # someone saved (or deleted the note) meanwhile: apply the edits to what is there
            time.sleep(VERIFY_DELAY_S)
            now = read_bytes(target.path)
            if now == new:
                return new
            if now is None:
                raise ConflictError(f"{target.uri} was deleted right after the edit; restore it from your editor")
            if not _unedited(now, ordered):
                return now  # their save holds our edit, or changed those very lines: either way it stands
            base = expect = now  # an editor's save from before ours replaced it: edit their text again
    raise NoteBusyError(f"{target.uri}: the note kept changing while editing; retry when it is not being edited")


def _unedited(data: bytes, edits: list[LineEdit]) -> bool:
    """Whether every range still reads what the caller saw (so the edit is not in this text)."""
    lines = note_lines(data)
    return all(e.end <= len(lines) and range_text(lines, e.start, e.end) == e.expect.rstrip() for e in edits)


def apply_edits(uri: str, data: bytes | None, edits: list[LineEdit]) -> bytes:
    """The note's bytes with the edits made, every other byte as it was."""
    if data is None:
        raise ConflictError(f"{uri} no longer exists; search again for the memory")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise NoteError(f"{uri} is UTF-16; convert it to UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`) before editing it")
    bom = _BOM if data.startswith(_BOM) else b""
    raw = data[len(bom):].splitlines(keepends=True)
    nl = b"\r\n" if b"\r\n" in data else b"\n"
    text = note_lines(data)
    for e in sorted(edits, key=lambda e: -e.start):  # bottom up: earlier line numbers stay valid
        if e.start < 1 or e.end < e.start or e.end > len(raw):
            raise ConflictError(f"{uri} is shorter than it was (lines {e.start}-{e.end} are gone); read it again")
        if range_text(text, e.start, e.end) != e.expect.rstrip():
            raise ConflictError(f"{uri} lines {e.start}-{e.end} changed since they were read; read them again "
                                "and retry")
        replacement = []
        if e.new is not None:
            ending = raw[e.end - 1][len(raw[e.end - 1].rstrip(b"\r\n")):]  # the range's last line ending kept
            body = e.new.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            replacement = [ln.encode("utf-8") + nl for ln in body[:-1]] + [body[-1].encode("utf-8") + ending]
        raw[e.start - 1:e.end] = replacement
    return bom + b"".join(raw)
