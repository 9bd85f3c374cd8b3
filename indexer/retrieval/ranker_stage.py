"""The ranking stage with a configured model other than e5: it re-scores the fused top candidates as e5 does."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from indexer.notes.memory_items import text_to_embed
from indexer.providers.rankers import Rankers
from indexer.retrieval.ranking_stage import SECTION_WEIGHT, STAGE_POOL, STAGE_WEIGHT


def rerank(ranked: list, aq, cfg, rankers: Rankers | None = None, pool: int = STAGE_POOL) -> list:
    """The top `pool` hits blended with the ranker's scores as ranking_stage blends e5's cosines (without e5's
    allowance for the other script, measured for e5 alone); the ranker reads what the embedder reads of each
    chunk. A ranker that cannot answer leaves the first stage's order, and each hit says why (ranker_error).
    rankers: the loaded models of the stores' holder; without one (stores opened outside a Memory), this
    search loads its own."""
    top = ranked[:pool]
    if len(top) < 2:
        return ranked
    try:
        scores = (rankers or Rankers()).score(cfg, aq.text, [text_to_embed(x.content, x.kind, x.section) for x in top])
    except Exception as exc:  # a model library raises many kinds; a search answers from its first stage
        why = " ".join(str(exc).split()) or type(exc).__name__
        return [replace(h, signals={**h.signals, "ranker_error": why}) for h in ranked]
    return blend(ranked, np.array(scores, dtype=float), aq.mostly_han, cfg.ranker_weight)


def blend(ranked: list, stage: np.ndarray, han: bool, share: float = 0.0) -> list:
    """The first len(stage) hits scored (1-a)·minmax(score) + a·minmax(stage), a = share, or when share is 0
    STAGE_WEIGHT for a memory record or a Chinese question (han) and SECTION_WEIGHT otherwise, on the pool's own
    score range above the hits after it (each keeps its stage score as ranker_score); new hits in the new order,
    the rest after."""
    top, rest = ranked[:len(stage)], ranked[len(stage):]
    weight = np.array([share or (STAGE_WEIGHT if x.kind == "memory" or han else SECTION_WEIGHT) for x in top])
    s = (1 - weight) * _minmax(np.array([x.score for x in top])) + weight * _minmax(stage)
    lo = max((x.score for x in rest), default=0.0)
    hi = top[0].score
    out = [replace(x, score=float(lo + (hi - lo) * (0.05 + 0.95 * v)) if hi > lo else x.score,
                   signals={**x.signals, "ranker_score": round(float(r), 6)}) for x, v, r in zip(top, s, stage)]
    return [out[i] for i in np.argsort(-s, kind="stable")] + rest


def _minmax(xs: np.ndarray) -> np.ndarray:
    lo, hi = float(xs.min()), float(xs.max())
    return (xs - lo) / (hi - lo) if hi > lo else np.ones_like(xs)
