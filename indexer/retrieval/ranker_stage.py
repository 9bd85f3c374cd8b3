"""The ranking stage with a configured model other than e5: it re-scores the fused top candidates as e5 does."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from indexer.notes.memory_items import text_to_embed
from indexer.providers import rankers
from indexer.retrieval.e5_stage import STAGE_POOL, blend


def rerank(ranked: list, aq, cfg, pool: int = STAGE_POOL) -> list:
    """The top `pool` hits blended with the ranker's scores exactly as with e5's cosines (without e5's
    allowance for the other script, measured for e5 alone); the ranker reads what the embedder reads of each
    chunk. A ranker that cannot answer leaves the first stage's order, and each hit says why (ranker_error)."""
    top = ranked[:pool]
    if len(top) < 2:
        return ranked
    try:
        scores = rankers.score(cfg, aq.text, [text_to_embed(x.content, x.kind, x.section) for x in top])
    except Exception as exc:  # a model library raises many kinds; a search answers from its first stage
        why = " ".join(str(exc).split()) or type(exc).__name__
        return [replace(h, signals={**h.signals, "ranker_error": why}) for h in ranked]
    return blend(ranked, np.array(scores, dtype=float), aq.mostly_han,
                 [{"ranker_score": round(s, 6)} for s in scores])
