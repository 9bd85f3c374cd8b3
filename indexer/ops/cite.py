"""The line range search and recall cite for a span of a note: the indexed chunk that holds it."""

from __future__ import annotations

from indexer.index import sql


def cited_range(store, uri: str, start: int, end: int) -> tuple[int, int]:
    """The lines of the smallest chunk of uri covering start..end (what a hit on it shows);
    the span itself when no chunk covers it (not indexed yet)."""
    rows = [r for r in sql.chunks_for_uri(store.con, uri) if r["start_line"] <= start and end <= r["end_line"]]
    if not rows:
        return start, end
    best = min(rows, key=lambda r: r["end_line"] - r["start_line"])
    return best["start_line"], best["end_line"]
