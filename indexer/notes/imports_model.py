"""What an import becomes before it is written: notes of entries, rendered to Markdown by pure functions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from indexer.errors import InputError
from indexer.notes import clock
from indexer.notes.append import format_entry

MAX_IMPORT_BYTES = 256 * 1024 * 1024  # a chat export larger than this is not one person's history


@dataclass(frozen=True)
class Entry:
    """One imported memory: a chat message, a mem0 memory or a lore entry."""

    text: str
    when: datetime | None = None
    speaker: str | None = None  # chats: who said it
    heading: str | None = None  # lore: the entry's title
    keys: tuple[str, ...] = ()
    disabled: bool = False


@dataclass(frozen=True)
class ImportedNote:
    """A note an import adds to, relative to its space (`journal/2024-06-05.md` in `spaces/Seraphina/`)."""

    space: str | None
    uri: str
    title: str
    type: str  # front-matter type of a new note: episodic (journals), fact, entity (lore)
    kind: str  # how entries are written: "journal" (- 14:03: ...), "dated" (- 2024-06-05: ...), "section"
    entries: tuple[Entry, ...]
    source: str  # the imported file, for messages
    tags: tuple[str, ...] = field(default=())


class ImportFormatError(InputError):
    """A file that cannot be imported; the message names the file and, where known, the line."""

    def __init__(self, path: Path | str, line: int | None, reason: str):
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")


def read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise ImportFormatError(path, None, f"{size} bytes is more than an import takes ({MAX_IMPORT_BYTES}); "
                                "split the export")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ImportFormatError(path, line, "not UTF-8 text; save the export as UTF-8") from None


def load_json(path: Path, text: str, first_line: int = 1):
    """Parsed JSON, or ImportFormatError naming the line where parsing stopped."""
    try:
        return json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", 1) + first_line - 1
        reason = getattr(exc, "msg", str(exc))
        raise ImportFormatError(path, line, f"not valid JSON ({reason})") from None


_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), 1)}
_MERIDIEM = re.compile(r"([A-Za-z]+)\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{1,2})\s*(am|pm)", re.I)
_HUMANIZED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s")


def parse_when(value, zone: str = "") -> datetime | None:
    """A local (naive) datetime from the stamps chat front ends write, None when there is none or it is unreadable;
    a moment (Unix time, or ISO with an offset) is read on the wall clock of the user's zone (config `timezone`).

    Accepted: Unix milliseconds, ISO 8601, `June 19, 2023 2:20pm`, `2024-7-12@01h31m37s` and
    `2024-6-5 @14h 56m 50s 682ms` (SillyTavern's own formats, old and new).
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isdigit()):
            stamp = float(value)
            stamp = stamp / 1000 if stamp > 1e11 else stamp  # milliseconds (JavaScript) or seconds
            return clock.wall(datetime.fromtimestamp(stamp, tz=timezone.utc), zone)
        if not isinstance(value, str):
            return None
        text = value.strip()
        m = _HUMANIZED.search(text)
        if m:
            return datetime(*(int(g) for g in m.groups()))
        m = _MERIDIEM.search(text)
        if m and m.group(1).lower() in _MONTHS:
            hour = int(m.group(4)) % 12 + (12 if m.group(6).lower() == "pm" else 0)
            return datetime(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)), hour, int(m.group(5)))
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return clock.wall(parsed, zone)
    except (ValueError, OverflowError, OSError):
        return None


def render_entry(entry: Entry, kind: str) -> str:
    """The Markdown an entry becomes; the same entry always renders the same (imports compare on it)."""
    if kind == "section":
        title = " ".join((entry.heading or "Entry").split()) + (" (disabled)" if entry.disabled else "")
        parts = [f"## {title}", ""]
        if entry.keys:
            parts += ["Keys: " + ", ".join(entry.keys), ""]
        if entry.disabled:
            parts += ["*Disabled in the source lorebook.*", ""]
        parts.append(entry.text.strip())
        return "\n".join(parts) + "\n"
    text = f"**{' '.join(entry.speaker.split())}:** {entry.text.strip()}" if entry.speaker else entry.text.strip()
    if entry.when is None:  # an undated memory: the list item without a stamp
        first, *rest = format_entry(text, "fact", journal=False).split("\n", 1)
        return "- " + first.split(": ", 1)[1] + ("\n" + rest[0] if rest else "")
    return format_entry(text, "fact", journal=kind == "journal", now=entry.when)


def note_header(note: ImportedNote) -> str:
    """Front matter and title of a note an import creates."""
    front = [f"type: {note.type}"]
    if note.tags:
        front.append("tags: " + json.dumps(list(note.tags), ensure_ascii=False))  # JSON is a YAML flow list
    return "---\n" + "\n".join(front) + "\n---\n\n" + f"# {note.title}\n\n"


_UNSAFE = re.compile(r"[^\w.-]+")  # \w is every script's letters and digits: 山谷 stays, `/`, `'` and spaces go


def slug(name: str, fallback: str = "untitled") -> str:
    """A file name from a book or chat name: no separators, spaces or quotes, no leading dot, any script kept."""
    cleaned = _UNSAFE.sub("-", str(name)).strip(" .-")
    return cleaned[:80] or fallback
