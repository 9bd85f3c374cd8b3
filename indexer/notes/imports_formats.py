"""Which import format a file is in (from its content unless told) and the notes it becomes."""

from __future__ import annotations

import os
from pathlib import Path

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


def detect(path: Path, text: str | None, data: bytes | None = None) -> str | None:
    """The format a file's content is in, None when it is none of them."""
    if text is None:
        return "sillytavern-card" if data is not None and st.is_png_card(data) else None
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    try:
        head = load_json(path, first)
    except ImportFormatError:
        head = None
    if st.is_chat_header(head) or (st.is_message(head) and path.suffix.lower() == ".jsonl"):
        return "sillytavern-chat"
    try:
        obj = load_json(path, text)
    except ImportFormatError:
        return None
    if st.is_group(obj):
        return GROUP
    if st.is_lorebook(obj):
        return "sillytavern-lorebook"
    if st.card_data(obj) is not None:
        return "sillytavern-card"
    if mem0.mem0_records(obj) is not None:
        return "mem0"
    return None


def parse_file(path: Path, fmt: str | None = None, space: str | None = None, strict: bool = True
               ) -> tuple[str | None, list[ImportedNote], int]:
    """(format, notes, hidden messages left out) of one file; an unrecognised file is an error when strict,
    else (None, [], 0)."""
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    space = space_name(space)
    is_png = path.suffix.lower() == ".png" or fmt == "sillytavern-card" and _is_png(path)
    data = path.read_bytes() if is_png else None
    text = None if is_png else read_text(path)
    found = fmt or detect(path, text, data)
    if found is None:
        if strict:
            raise ImportFormatError(path, None, f"not a format mdmem imports; pass --format ({', '.join(FORMATS)})")
        return None, [], 0
    hidden = 0
    if found == GROUP:
        notes = []  # names its chats' group (see parse_chat); holds no memories itself
    elif found == "sillytavern-chat":
        notes, hidden = st.parse_chat(path, text, space)
    elif found == "sillytavern-card":
        notes = st.parse_card(path, st.png_card(path, data) if is_png else load_json(path, text), space)
    else:
        obj = load_json(path, text)
        notes = st.parse_lorebook(path, obj, space) if found == "sillytavern-lorebook" else mem0.parse_mem0(path, obj, space)
    for note in notes:
        try:
            space_name(note.space)
        except InputError as exc:
            raise ImportFormatError(path, None, f"{exc} (or pass --space NAME)") from None
    return found, notes, hidden


def _is_png(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"
