"""Lifts for memories after fusion: the best memory's day in its note, and days or months the query names.

Memories written on one day in one note are often one episode, so a question answered by one of
them is often answered by its neighbours too; a question that names a day ("on 7 May 2023",
"2023年5月7日") asks for memories of that day. Measured on locomo-facts-dev (docs/BENCHMARKS.md,
"Memory items"); sections of documents are never lifted.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date

from indexer.models import Hit

SAME_DAY = 0.3  # share of the best score added to memories of the best memory's day and note
NAMED_DAY = 0.5  # ... to memories dated on a day the query names
NAMED_MONTH = 0.15  # ... to memories dated in a month the query names (when no day matched)

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_M = "|".join(_MONTHS) + "|" + "|".join(m[:3] for m in _MONTHS) + r"|sept"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_M})\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_M})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_M})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})(?:-(\d{1,2}))?(?!\d)")
_HAN = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")


def named_days(text: str) -> tuple[set[str], set[str]]:
    """(days, months) the text names, as YYYY-MM-DD and YYYY-MM."""
    days: set[str] = set()
    months: set[str] = set()
    for m in _DAY_MONTH_YEAR.finditer(text):
        _add(days, months, m.group(3), _month(m.group(2)), m.group(1))
    for m in _MONTH_DAY_YEAR.finditer(text):
        _add(days, months, m.group(3), _month(m.group(1)), m.group(2))
    for m in _MONTH_YEAR.finditer(text):
        _add(days, months, m.group(2), _month(m.group(1)), None)
    for m in (*_ISO.finditer(text), *_HAN.finditer(text)):
        _add(days, months, m.group(1), int(m.group(2)), m.group(3))
    return days, months


def _month(name: str) -> int:
    key = name.lower()[:3]
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(key))


def _add(days: set, months: set, year: str, month: int, day: str | None) -> None:
    try:
        when = date(int(year), month, int(day) if day else 1)
    except ValueError:
        return
    months.add(when.isoformat()[:7])
    if day:
        days.add(when.isoformat())


def lift(hits: list[Hit], days, months) -> list[Hit]:
    """The hits with memory lifts added to their scores (order is left to the caller); days and months:
    what the query names (named_days)."""
    memories = [h for h in hits if h.kind == "memory" and h.date]
    if not memories:
        return hits
    best = max(hits, key=lambda h: h.score)
    top = max(memories, key=lambda h: h.score)
    dated = {id(h) for h in memories}
    out = []
    for h in hits:
        score, extra = h.score, 0.0
        if id(h) in dated:
            day = h.date[:10]
            if h is not top and h.store == top.store and h.uri == top.uri and day == top.date[:10]:
                # up to just below the best memory, in their own order: the lift reorders memories,
                # it never carries one past the hits that outranked the best memory
                score = min(score + SAME_DAY * best.score, top.score - 1e-3 * (top.score - score))
            if day in days:
                extra += NAMED_DAY
            elif day[:7] in months:
                extra += NAMED_MONTH
        score += extra * best.score
        if score != h.score:
            h = dataclasses.replace(h, score=score, signals={**h.signals, "memory_lift": round(score - h.score, 4)})
        out.append(h)
    return out
