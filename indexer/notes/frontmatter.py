"""Split YAML front matter from a note and read the fields mdmem uses."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from indexer.notes.memory_items import day_of


@dataclass(frozen=True)
class FrontMatter:
    type: str | None = None
    importance: int | None = None
    tags: tuple[str, ...] = ()
    evergreen: bool | None = None
    date: str | None = None  # `date`, else `created`, as YYYY-MM-DD
    aliases: tuple[str, ...] = ()  # other names of the note's subject (Obsidian `aliases:`), searchable
    problem: str | None = None  # why the front matter was ignored, if it was
    adjusted: tuple[str, ...] = ()  # values read otherwise than written (importance: 99 is read as 5)


MAX_LINES = 400  # a note that opens with --- and never closes must not be read as one huge header
MAX_FIELD = 64  # characters kept of a type or a tag


def split_front_matter(text: str) -> tuple[FrontMatter, int]:
    """Parse leading `---` YAML; return it and how many lines it spans (0 when absent)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatter(), 0
    for i in range(1, min(len(lines), MAX_LINES)):
        if lines[i].strip() in ("---", "..."):
            return _parse("\n".join(lines[1:i])), i + 1
    return FrontMatter(problem=f"front matter opened with --- but not closed within {MAX_LINES} lines"), 0


def _parse(block: str) -> FrontMatter:
    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        return FrontMatter(problem=f"front matter is not valid YAML ({first})")
    except RecursionError:  # PyYAML builds nested values recursively
        return FrontMatter(problem="front matter is nested too deeply to read")
    if not isinstance(data, dict):
        return FrontMatter(problem="front matter is not a mapping of key: value")
    importance, adjusted = _as_importance(data.get("importance"))
    return FrontMatter(
        type=_as_type(data.get("type")),
        importance=importance, adjusted=adjusted,
        tags=_as_tags(data.get("tags")),
        evergreen=data.get("evergreen") if isinstance(data.get("evergreen"), bool) else None,
        date=day_of(data.get("date")) or day_of(data.get("created")),
        aliases=_as_list(data.get("aliases", data.get("alias"))),
    )


def _scalar(value) -> str | None:
    # only plain values count: str() of a nested list, e.g. a YAML alias bomb, can take gigabytes
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return str(value).strip()[:MAX_FIELD] or None


def _as_type(value) -> str | None:
    text = _scalar(value)
    return text.lower()[:40] if text else None


def _as_importance(value) -> tuple[int | None, tuple[str, ...]]:
    """Importance is 1-5 (a 0-1 fraction is scaled); what is read otherwise than written is said."""
    if value is None:
        return None, ()
    shown = _shown(value)
    try:
        num = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):  # text, or an integer too big for a float
        num = None
    if num is None or num != num:  # not a number (NaN included)
        return None, (f"importance {shown!r} is not a number from 1 to 5; ignored (the note's default, 3, is used)",)
    if 0 <= num <= 1 and not num.is_integer():
        num = 1 + num * 4
    if 1 <= num <= 5:
        return int(round(num)), ()
    kept = 5 if num > 5 else 1
    return kept, (f"importance {shown} is outside 1-5; read as {kept}",)


def _shown(value) -> str:
    try:
        return str(value)[:MAX_FIELD] if isinstance(value, (str, int, float)) else type(value).__name__
    except ValueError:  # an integer too long to print
        return "a huge number"


def _as_tags(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [t for t in value.replace(",", " ").split() if t]
    return _as_list(value)


def _as_list(value) -> tuple[str, ...]:
    """A YAML list (or one value) of plain names, at most 32 of them."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(t for t in map(_scalar, value[:32]) if t)
