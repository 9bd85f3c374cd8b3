"""Rows a store removed lately, kept a while by text hash: their counters and vectors go to a copy that reappears."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from indexer.index import sql

RELEASE_SECONDS = 120.0  # a memory cut from one note and pasted into another within this keeps its counters
MAX_RELEASED = 10_000
COUNTERS = ("reinforcement", "access_count", "accessed_at", "strength", "created_at")


@dataclass
class Released:
    """Rows removed lately, by text hash: a memory that reappears (in another note, or in the same note
    after a save that first truncated it) takes its counters back and needs no new embedding."""

    rows: dict[str, tuple[float, dict]] = field(default_factory=dict)  # hash -> (when, counters)
    vectors: dict[str, tuple[float, np.ndarray]] = field(default_factory=dict)
    added: dict[str, tuple[float, str]] = field(default_factory=dict)  # hash -> (when, id) of fresh rows

    def _keep(self, book: dict, key: str, value) -> None:
        now = time.time()
        book.pop(key, None)
        book[key] = (now, value)  # newest last: expiry looks at the front only
        while book:
            first = next(iter(book))
            if now - book[first][0] <= RELEASE_SECONDS and len(book) <= MAX_RELEASED:
                break
            del book[first]

    def release(self, con, row: dict, vector=None) -> None:
        """A row is gone from its note: hand its counters to a fresh copy elsewhere, or keep them a while."""
        if vector is not None:
            self._keep(self.vectors, row["content_hash"], vector)
        if not (row["reinforcement"] or row["access_count"]):
            return
        counters = {"id": row["id"], **{k: row[k] for k in COUNTERS}}
        fresh = self.added.pop(row["content_hash"], None)
        if fresh is not None and sql.chunk_exists(con, fresh[1]):
            sql.carry_counters(con, fresh[1], counters)
            sql.add_alias(con, row["id"], fresh[1])  # a memory moved to another note keeps its id too
        else:
            self._keep(self.rows, row["content_hash"], counters)

    def claim(self, content_hash: str, chunk_id: str) -> dict | None:
        """Counters of a just-removed row with this text; else remember the fresh row for a later removal."""
        found = self.rows.pop(content_hash, None)
        if found is None or time.time() - found[0] > RELEASE_SECONDS:
            self._keep(self.added, content_hash, chunk_id)
            return None
        return found[1]

    def vector(self, content_hash: str) -> np.ndarray | None:
        found = self.vectors.get(content_hash)
        return found[1] if found is not None and time.time() - found[0] <= RELEASE_SECONDS else None
