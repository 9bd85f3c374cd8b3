"""The user's clock: today and the time of day in the configured zone (config `timezone`; empty: the system's)."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo


def now(zone: str = "") -> datetime:
    """The wall-clock time in the zone, without a zone attached (as `add` stamps it and a journal reads)."""
    return datetime.now(ZoneInfo(zone)).replace(tzinfo=None) if zone else datetime.now()


def today(zone: str = "") -> date:
    return now(zone).date()


def wall(moment: datetime, zone: str = "") -> datetime:
    """A moment as the zone's wall clock: one with an offset is moved into the zone, one without is taken
    as already written in it (a journal's 19:30 is the user's 19:30 wherever the process runs)."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(ZoneInfo(zone) if zone else None).replace(tzinfo=None)
