"""A superseded memory's line as it stays in its note: struck through, with the day and the id that replaced it."""

from __future__ import annotations

import re
from datetime import date

_MARK = re.compile(r"~~(?P<old>.+?)~~\s*\(superseded on (?P<day>\d{4}-\d{2}-\d{2}) by (?P<id>[0-9a-f]{16})\)")


def struck(text: str, day: date, new_id: str) -> str:
    """The old memory's line as it stays in the note."""
    return f"~~{text}~~ (superseded on {day.isoformat()} by {new_id})"


def marked(content: str):
    """The superseded mark in a memory's text (old text, day, new id), or None."""
    return _MARK.search(content or "")
