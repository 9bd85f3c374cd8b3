"""The line range search and recall cite for a span of a note: the indexed chunk that holds it."""

from __future__ import annotations

from indexer.index import sql


def cited_range(stores, store_name: str, uri: str, start: int, end: int) -> tuple[int, int]:
    """The lines of the smallest chunk of uri covering start..end (what a hit on it shows);
    the span itself when no chunk covers it (not indexed yet)."""
    return cited_chunk(stores, store_name, uri, start, end)[:2]


def cited_chunk(stores, store_name: str, uri: str, start: int, end: int) -> tuple[int, int, str | None]:
    """cited_range and the id of that chunk (None when no chunk covers the span yet)."""
    store = next((s for s in stores if s.name == store_name), None)
    if store is None:
        return start, end, None
    rows = [r for r in sql.chunks_for_uri(store.con, uri) if r["start_line"] <= start and end <= r["end_line"]]
    if not rows:
        return start, end, None
    best = min(rows, key=lambda r: r["end_line"] - r["start_line"])
    return best["start_line"], best["end_line"], best["id"]
