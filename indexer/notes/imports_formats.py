"""The import formats, one registration each: how a file in it is recognised (from its content unless told)
and the notes it becomes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

from indexer.errors import InputError
from indexer.notes import imports_mem0 as mem0
from indexer.notes import imports_sillytavern as st
from indexer.notes.imports_model import ImportedNote, ImportFormatError, load_json, read_text
from indexer.notes.names import IMPORT_FORMATS
from indexer.notes.spaces import space_name

FORMATS = IMPORT_FORMATS
SUFFIXES = (".jsonl", ".json", ".png")
GROUP = "sillytavern-group"  # a group's own file: read for its name, imported as nothing


def import_files(path: Path) -> list[Path]:
    """The files an import reads: the file itself, or every .jsonl/.json/.png below a folder (no dot-folders)."""
    path = Path(path).expanduser()
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such file or folder; give a chat .jsonl, a lorebook or card, a mem0 export, "
                         "or a folder of them")
    found = []
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _backups(Path(folder), d))
        found += [Path(folder) / f for f in sorted(files) if f.lower().endswith(SUFFIXES) and not f.startswith(".")]
    return found


def _backups(folder: Path, name: str) -> bool:
    """SillyTavern's `backups/` beside `chats/`: a copy of every chat at every save, named so that a group
    chat's copy cannot be told from its group."""
    return name == "backups" and ((folder / "chats").is_dir() or (folder / "group chats").is_dir())


@dataclass
class Read:
    """One file as the formats look at it: its text (or a PNG's bytes), its first line and whole text as JSON."""

    path: Path
    text: str | None
    data: bytes | None = None
    zone: str = ""  # the user's time zone: a moment's day is the day there

    @cached_property
    def head(self):
        if self.text is None:
            return None
        first = next((ln for ln in (self.text or "").splitlines() if ln.strip()), "")
        try:
            return load_json(self.path, first)
        except ImportFormatError:
            return None

    @cached_property
    def obj(self):
        if self.text is None:
            return None
        try:
            return load_json(self.path, self.text)
        except ImportFormatError:
            return None

    def json(self):
        return load_json(self.path, self.text)  # a format that was asked for: a bad file says why


@dataclass(frozen=True)
class ImportFormat:
    """One format mdmem imports: how a file in it is recognised, and the notes (and hidden messages) it becomes."""

    name: str
    sniff: Callable[[Read], bool]
    parse: Callable[[Read, str | None], tuple[list[ImportedNote], int]]


# Tried in this order on a file of unknown format: a chat's first line before the whole-file JSON kinds.
REGISTRY = (
    ImportFormat("sillytavern-chat",
                 lambda f: st.is_chat_header(f.head) or (st.is_message(f.head) and f.path.suffix.lower() == ".jsonl"),
                 lambda f, space: st.parse_chat(f.path, f.text, space, f.zone)),
    # a group's own file: read for its name by its chats (see parse_chat), imported as nothing itself
    ImportFormat(GROUP, lambda f: st.is_group(f.obj), lambda f, space: ([], 0)),
    ImportFormat("sillytavern-lorebook", lambda f: st.is_lorebook(f.obj),
                 lambda f, space: (st.parse_lorebook(f.path, f.json(), space), 0)),
    ImportFormat("sillytavern-card",
                 lambda f: st.is_png_card(f.data) if f.text is None else st.card_data(f.obj) is not None,
                 lambda f, space: (st.parse_card(f.path, st.png_card(f.path, f.data) if f.data is not None
                                                 else f.json(), space), 0)),
    ImportFormat("mem0", lambda f: mem0.mem0_records(f.obj) is not None,
                 lambda f, space: (mem0.parse_mem0(f.path, f.json(), space, f.zone), 0)),
)
_BY_NAME = {f.name: f for f in REGISTRY}


def detect(path: Path, text: str | None, data: bytes | None = None) -> str | None:
    """The format a file's content is in, None when it is none of them."""
    f = Read(path, text, data)
    if text is None and data is None:
        return None
    return next((fmt.name for fmt in REGISTRY if fmt.sniff(f)), None)


def parse_file(path: Path, fmt: str | None = None, space: str | None = None, strict: bool = True, zone: str = ""
               ) -> tuple[str | None, list[ImportedNote], int]:
    """(format, notes, hidden messages left out) of one file; an unrecognised file is an error when strict,
    else (None, [], 0). zone: the user's time zone, where a stamp with an offset falls on its day."""
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    space = space_name(space)
    is_png = path.suffix.lower() == ".png" or fmt == "sillytavern-card" and _is_png(path)
    f = Read(path, None if is_png else read_text(path), path.read_bytes() if is_png else None, zone)
    found = fmt or detect(path, f.text, f.data)
    if found is None:
        if strict:
            raise ImportFormatError(path, None, f"not a format mdmem imports; pass --format ({', '.join(FORMATS)})")
        return None, [], 0
    notes, hidden = _BY_NAME[found].parse(f, space)
    for note in notes:
        try:
            space_name(note.space)
        except InputError as exc:
            raise ImportFormatError(path, None, f"{exc} (or pass --space NAME)") from None
    return found, notes, hidden


def _is_png(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"
