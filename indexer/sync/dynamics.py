"""Memory strength: a spaced-repetition forgetting curve, pure arithmetic with no I/O."""

from __future__ import annotations

import math

DAY = 86400.0
STRETCH = 1.5  # each reinforcement or access multiplies the half-life by this (like a review)
MAX_EVENTS = 12  # beyond a dozen reviews the half-life stops growing (~130x), so nothing is immortal by accident
DEFAULT_IMPORTANCE = 3


def half_life_days(base_days: float, importance: int, reinforcement: float, access_count: int) -> float:
    """The half-life of one chunk: importance scales it, every restatement and every access stretches it.

    Importance 1..5 maps to 0.5x..2x around the default 3, so a note marked important
    fades at half the speed of an ordinary one.
    """
    imp = max(1, min(5, int(importance or DEFAULT_IMPORTANCE)))
    importance_factor = 2.0 ** ((imp - DEFAULT_IMPORTANCE) / 2.0)
    events = min(MAX_EVENTS, max(0.0, float(reinforcement or 0)) + max(0, int(access_count or 0)))
    return base_days * importance_factor * STRETCH ** events


def strength(now: float, created_at: float, accessed_at: float | None, importance: int, reinforcement: float,
             access_count: int, evergreen: bool, base_half_life_days: float) -> float:
    """1.0 when fresh (or evergreen), halving every half-life since it was last created or used."""
    if evergreen:
        return 1.0
    last = max(created_at or 0.0, accessed_at or 0.0)
    age_days = max(0.0, now - last) / DAY
    hl = half_life_days(base_half_life_days, importance, reinforcement, access_count)
    return float(math.pow(0.5, age_days / hl))
