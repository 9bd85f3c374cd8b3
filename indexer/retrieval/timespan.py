"""`--since` / `--until`: a day (YYYY-MM-DD) or an age (7d, 2w, 3m, 1y) as the bounds of a memory's date."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from indexer.errors import InputError
from indexer.notes import clock

_AGE = re.compile(r"^(\d{1,5})\s*([dwmy])$", re.I)
_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}


def parse_day(value, flag: str, today: date | None = None) -> date | None:
    """The day a bound names; None for an empty value; InputError with an example otherwise."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    age = _AGE.match(text)
    if age:
        return (today or clock.today()) - timedelta(days=int(age.group(1)) * _DAYS[age.group(2).lower()])
    try:
        return date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else _bad(text, flag)
    except ValueError:
        return _bad(text, flag)


def _bad(text: str, flag: str):
    raise InputError(f"{flag} {text[:80]!r} is not a day or an age; give a day such as 2026-03-01 or an age such as 7d, "
                     "2w or 3m")


def bounds(since=None, until=None, today: date | None = None) -> tuple[str | None, str | None]:
    """ISO bounds for SQL: memory_date >= since and memory_date < the day after until (until is inclusive)."""
    lo = parse_day(since, "--since", today)
    hi = parse_day(until, "--until", today)
    if lo and hi and lo > hi:
        raise InputError(f"--since {lo} is after --until {hi}; swap the two days")
    return (lo.isoformat() if lo else None), ((hi + timedelta(days=1)).isoformat() if hi else None)


def today(now=None, zone: str = "") -> date:
    """The caller's today: `now` (a day, or a day and time, for tests and replays; one with an offset is that
    moment in the user's zone) or the clock's in the user's zone (config `timezone`)."""
    if now is None or (isinstance(now, str) and not now.strip()):
        return clock.today(zone)
    if isinstance(now, datetime):
        return clock.wall(now, zone).date()
    if isinstance(now, date):
        return now
    text = str(now).strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?", text):
            return clock.wall(datetime.fromisoformat(text), zone).date()
    except ValueError:
        pass
    raise InputError(f"--now {text[:80]!r} is not a day; give a day such as 2026-11-25 (or 2026-11-25T09:30)")
