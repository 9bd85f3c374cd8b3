"""Bounded memos of pure functions of text: the one place answers are kept between calls without an object."""

from __future__ import annotations

from functools import lru_cache


def pure(maxsize: int):
    """Keep up to maxsize answers of a function whose answer depends on its (hashable) arguments alone, the
    least recently asked dropped first. Only for pure functions: a memo of anything that reads a file, a clock,
    a setting or a model would answer from the past; state like that belongs to an object someone holds."""
    return lru_cache(maxsize=maxsize)
