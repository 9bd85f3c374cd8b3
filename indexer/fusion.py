"""Pure score fusion of full-text and vector candidates: weighted (normalised) sum or RRF."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Candidate:
    """One chunk seen by either signal; raw component scores, None where a signal did not see it."""

    key: tuple[str, str]  # (store, chunk id)
    row: dict
    bm25: float | None = None
    similarity: float | None = None
    fts_rank: int | None = None
    vec_rank: int | None = None


def weighted(cands: list[Candidate], vector_weight: float) -> dict[tuple, dict]:
    """score = (1-w)·bm25/max(bm25) + w·minmax(cosine); a signal that missed a chunk gives 0.

    BM25 is divided by its maximum (no match is a true zero), cosine is min-max scaled because
    embedding similarities crowd into a narrow band.
    """
    bm = [c.bm25 for c in cands if c.bm25 is not None]
    sims = [c.similarity for c in cands if c.similarity is not None]
    top_bm = max(bm) if bm else 0.0
    lo, hi = (min(sims), max(sims)) if sims else (0.0, 0.0)
    out = {}
    for c in cands:
        f = (c.bm25 / top_bm) if (c.bm25 is not None and top_bm > 0) else 0.0
        v = ((c.similarity - lo) / (hi - lo) if hi > lo else 1.0) if c.similarity is not None else 0.0
        out[c.key] = {"score": (1 - vector_weight) * f + vector_weight * v, "fts": f, "vector": v}
    return out


def rrf(cands: list[Candidate], k: int = 60) -> dict[tuple, dict]:
    """Reciprocal rank fusion, scaled so a chunk first in both lists scores 1."""
    out = {}
    for c in cands:
        f = 1.0 / (k + c.fts_rank) if c.fts_rank is not None else 0.0
        v = 1.0 / (k + c.vec_rank) if c.vec_rank is not None else 0.0
        out[c.key] = {"score": (f + v) * (k + 1) / 2, "fts": f, "vector": v}
    return out


def fts_only(cands: list[Candidate]) -> dict[tuple, dict]:
    bm = [c.bm25 for c in cands if c.bm25 is not None]
    top = max(bm) if bm else 0.0
    return {c.key: {"score": (c.bm25 / top) if top > 0 and c.bm25 else 0.0} for c in cands if c.bm25 is not None}


def vector_only(cands: list[Candidate]) -> dict[tuple, dict]:
    return {c.key: {"score": c.similarity} for c in cands if c.similarity is not None}
