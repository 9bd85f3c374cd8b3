"""Hybrid search in stages over one or more stores: analyse → collect → fuse → adjust → cut.

Each adjusting stage takes the ranked hits and gives them back re-scored and ranked, with what it read
in each hit's `signals`; a new stage is a function in ADJUST. Time words and superseded values wrap the run
(`retrieval/timewindow`, `retrieval/superseded`); `explain` only shows the signals.
"""

from __future__ import annotations

import dataclasses
import time

from indexer.config import Config
from indexer.index import sql
from indexer.index.stores import Store
from indexer.models import Hit
from indexer.notes.textseg import mostly_han
from indexer.retrieval import ranking_stage
from indexer.retrieval import ranker_stage
from indexer.retrieval import episodes
from indexer.retrieval import relevance
from indexer.retrieval import superseded
from indexer.retrieval import timewindow
from indexer.retrieval.collect import Pool, collect
from indexer.retrieval.fusion import for_embedder, fuse
from indexer.retrieval.query import AnalyzedQuery, Query, analyze


def search(stores: list[Store], embedder, cfg: Config, q: Query, made: dict | None = None) -> list[Hit]:
    """Run one query over the stores and return one merged ranking; counting accesses is the caller's.
    made: the question's vectors by text, shared by the runs of one search_within."""
    aq = analyze(q)
    cfg = for_embedder(cfg, getattr(embedder, "model_id", ""))
    q.in_time()
    pool = collect(stores, embedder, cfg, aq, made)
    q.in_time()
    hits = ranked(fuse(pool, aq, cfg))
    for stage in ADJUST:
        q.in_time()
        hits = stage(hits, aq, pool, cfg)
    hits = in_question_script(hits, q.text)
    if pool.degraded:
        return [dataclasses.replace(h, degraded=True) for h in hits[:q.limit]]
    return hits[:q.limit]


def search_within(stores: list[Store], embedder, cfg: Config, q: Query, window, made: dict | None = None) -> list[Hit]:
    """search() with the window of the query's time words applied and superseded values put below the
    current ones; the signals shown when the query asks to explain. A query without a deadline gets
    search_timeout_s from now: past it a stage does not start (SearchTimeoutError). made: the question's
    vectors by text, left for the caller (recall's gathering reading asks e5's again otherwise)."""
    if q.deadline is None:
        q = dataclasses.replace(q, deadline=time.monotonic() + cfg.search_timeout_s)
    made = {} if made is None else made  # a query naming a time runs twice (inside the window and out): embedded once
    hits = superseded.demote(timewindow.search(lambda one: search(stores, embedder, cfg, one, made), q, window, cfg,
                                               lambda since, until: any(sql.any_dated(st.con, since, until)
                                                                        for st in stores)))
    hits = in_question_script(hits, q.text)
    return [dataclasses.replace(h, explain=dict(h.signals)) for h in hits] if q.explain else hits


# scores this close are one score: a day's Chinese and English memory, both listed for `11月20日`, tied at
# 0.39375 exactly and the English one came first (the file order decided)
TIE_EPS = 1e-6


def in_question_script(hits: list[Hit], question: str) -> list[Hit]:
    """Among hits whose scores tie, those in the question's script (Chinese or not) come first;
    a question with neither Han nor Latin letters (a bare date) prefers none."""
    if not any(c.isalpha() for c in question):
        return hits
    han = mostly_han(question)
    out: list[Hit] = []
    run: list[Hit] = []
    for h in hits + [None]:
        if h is not None and run and abs(run[0].score - h.score) <= TIE_EPS:
            run.append(h)
            continue
        out.extend(sorted(run, key=lambda x: mostly_han(x.content) != han))  # stable: the old order otherwise
        run = [h] if h is not None else []
    return out


def ranked(hits: list[Hit]) -> list[Hit]:
    """Best first; ties in a fixed order, so a ranking never depends on the order candidates arrived in."""
    return sorted(hits, key=lambda h: (-h.score, h.store, h.uri, h.start_line))


def by_strength(hits: list[Hit], aq: AnalyzedQuery, pool: Pool, cfg) -> list[Hit]:
    """A chunk's relevance times its strength (its forgetting curve, floored); below min_score it goes.
    min_score applies here, before the lifts, as it was measured. A search within dates lists its days: only a
    min_score the caller set drops one of them (min-max scaling gives the pool's farthest cosine 0, and a day of
    two journal lines lost one; a plain vector search scores a far one below 0)."""
    listing = (aq.q.since is not None or aq.q.until is not None) and aq.q.min_score <= 0
    out = []
    for h in hits:
        row = pool.cands[(h.store, h.id)].row
        mult = dynamics_multiplier(row, cfg.decay_floor)
        score = h.score * mult
        # the pool's last candidate of one signal scales to 0 (min-max) yet was found: with two memories, the
        # one a reworded restatement holds; it stays, last (and a search within dates keeps every memory of them)
        if not listing and (score < aq.q.min_score or (
                score <= 0 and h.signals.get("bm25") is None and h.signals.get("cosine") is None)):
            continue
        out.append(dataclasses.replace(h, score=score, signals={**h.signals, "strength": row["strength"],
                                                                "dynamics": round(mult, 6)}))
    return ranked(out)


def dynamics_multiplier(row: dict, floor: float) -> float:
    strength = 1.0 if row["evergreen"] else max(0.0, min(1.0, row["strength"]))
    return floor + (1.0 - floor) * strength


def by_memory_days(hits: list[Hit], aq: AnalyzedQuery, pool: Pool, cfg) -> list[Hit]:
    return ranked(episodes.lift(hits, aq.days, aq.months))


def by_ranking_model(hits: list[Hit], aq: AnalyzedQuery, pool: Pool, cfg) -> list[Hit]:
    if pool.mode != "hybrid" or not cfg.rerank or cfg.ranker == "none":
        return hits
    if cfg.ranker != "e5":
        return ranker_stage.rerank(hits, aq, cfg, pool.rankers)
    return relevance.attach(ranking_stage.rerank(hits, {k: c.row["content_hash"] for k, c in pool.cands.items()},
                                            pool.cons, aq, qvec=pool.e5_query, scale=cfg.e5_stage_scale),
                            aq, pool.e5_query, home=cfg.home)


ADJUST = (by_strength, by_memory_days, by_ranking_model)
