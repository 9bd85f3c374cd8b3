"""A stage around search: superseded values below the current ones, still findable."""

from __future__ import annotations

import dataclasses

from indexer.models import Hit
from indexer.notes.struck_lines import marked

RANK_FACTOR = 0.5  # a superseded memory's score is halved: it stays findable, below the value that replaced it


def demote(hits: list[Hit]) -> list[Hit]:
    """Superseded memories below the current ones (their score × RANK_FACTOR), order kept otherwise."""
    if not any(marked(h.content) for h in hits):
        return hits
    out = [dataclasses.replace(h, score=h.score * RANK_FACTOR,
                               signals={**h.signals, "superseded": True})
           if marked(h.content) else h for h in hits]
    out.sort(key=lambda h: (-h.score, h.store, h.uri, h.start_line))
    # a restatement worded differently can score far under the old line it replaced ("I live in Paris." then
    # "I moved to Berlin; I live in Berlin now."): the old one then goes right under the one that replaced it
    for old in [h for h in out if marked(h.content)]:
        newer = next((i for i, h in enumerate(out) if h.id == marked(old.content).group("id")), None)
        if newer is not None and newer > out.index(old):
            out.remove(old)
            out.insert(newer, old)
    return out
