"""The window a query's time words name, as one step of search: keep the memories dated in it, or lift them."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta

from indexer.models import Hit
from indexer.notes.timewords import Window, find
from indexer.retrieval import timespan

_WORDY = re.compile(r"\w", re.U)


def window_for(text: str, now, cfg) -> Window | None:
    """The window of the query's time words relative to the caller's today (`now`), or None (none, or off)."""
    today = timespan.today(now, cfg.timezone)  # a bad `now` is refused even when the query names no time
    return None if cfg.time_window == "off" else find(text, today)


def search(run, q, window: Window | None, cfg, dated=None) -> list[Hit]:
    """`run(query)` with the window applied: "filter" keeps memories dated in it (all hits when none is),
    "rank" lifts them by time_window_lift of the best score, and keeps only them when the question is its time
    words alone. The time words leave the matched text,
    so 上周 no longer matches 周一 in a note of this week. dated(since, until): whether any memory is dated
    then; when none is, the run inside the window is left out (a year named as a fact, 1923年设站, cost a
    whole search and a second question embedding for nothing: 90-110 ms of a hybrid question at 1M)."""
    if window is None:
        return run(q)
    rest = q.text
    for words in window.words:  # the query's own text: recall may have put the conversation before it
        rest = rest.replace(words, " ", 1)
    only_days = not _WORDY.search(rest)  # 昨天, last week: the question is its time words, the window all it asks
    text = q.text if only_days else " ".join(rest.split())
    since, until = _within(q, window)
    some = since < until and (dated is None or dated(since, until))
    inside = run(dataclasses.replace(q, text=text, since=since, until=until)) if some else []
    if (cfg.time_window == "filter" or only_days) and inside:
        return [_mark(h, window, True, 0.0) for h in inside]
    if not inside:  # nothing dated then: the time words may be the memory's own words ("last weekend")
        return [_mark(h, window, dated_in(h.date, window), 0.0) for h in run(q)]
    outside = run(dataclasses.replace(q, text=text))
    best = max(h.score for h in inside + outside)
    ids = {(h.store, h.id) for h in inside}
    # a memory is in the window by its own date, whichever run found it: the run outside the window may
    # bring one the run inside left below its limit
    lift = cfg.time_window_lift * best
    merged = [_mark(h, window, True, lift) for h in inside]
    for h in outside:
        if (h.store, h.id) not in ids:
            within = dated_in(h.date, window)
            merged.append(_mark(h, window, within, lift if within else 0.0))
    merged.sort(key=lambda h: (-h.score, h.store, h.uri, h.start_line))
    return merged[:q.limit]


def _within(q, window: Window) -> tuple[str, str]:
    """The window narrowed by the caller's own since/until (ISO; until is the day after the last)."""
    since = max(filter(None, (q.since, window.start.isoformat())))
    until = min(filter(None, (q.until, (window.end + timedelta(days=1)).isoformat())))
    return since, until


def dated_in(day: str | None, window: Window) -> bool:
    """Whether a memory's date (YYYY-MM-DD, with THH:MM when it has a time) falls on one of the window's
    days: both ends inclusive, the time of day never matters."""
    return bool(day) and window.start.isoformat() <= day[:10] <= window.end.isoformat()


def _mark(h: Hit, window: Window, inside: bool, lift: float) -> Hit:
    return dataclasses.replace(h, score=h.score + lift, signals={**h.signals, "window": window.label(),
                                                                 "in_window": inside, "window_lift": round(lift, 6)})


def tell_recall(res: dict, window: Window | None) -> dict:
    """A recall answer that says which window its memories were chosen from (its block's first line too)."""
    if window is None:
        return res
    res = {**res, "window": window.as_dict()}
    inside = [m for m in res.get("memories", ()) if dated_in(m.get("date"), window)]
    if res.get("text"):
        head, _, rest = res["text"].partition("\n")
        note = "dated " + window.label() if inside else "none dated " + window.label() + "; the closest instead"
        res["text"] = f"{head[:-1]} ({note}):\n{rest}"
    return res
