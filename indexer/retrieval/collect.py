"""Search's first stage: each store's candidates, from its full text (with feedback words) and its vectors."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from indexer.config import Config
from indexer.errors import ProviderUnavailable
from indexer.index import db
from indexer.index import sql
from indexer.index.stores import Store
from indexer.notes.textseg import match_any
from indexer.retrieval import ranking_stage
from indexer.retrieval import feedback
from indexer.retrieval import query_match
from indexer.retrieval import full_text
from indexer.retrieval import vector_leg
from indexer.retrieval.fusion import Candidate
from indexer.retrieval.query import AnalyzedQuery


@dataclass
class Pool:
    """Every chunk either side saw, keyed (store, chunk id), and how they were looked for."""

    mode: str  # the mode that can be served: "fts" when no vector could be had
    cands: dict[tuple, Candidate] = field(default_factory=dict)
    feedback_words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per store
    feedback: bool = False  # the expanded query's BM25 is a signal of this search
    vector: np.ndarray | None = None
    cons: dict = field(default_factory=dict)  # store name -> connection (later stages read vectors)
    e5_query: Future | None = None  # the ranking model's vector of the question, made beside this stage
    rankers: object = None  # the stores' loaded ranking models (providers.rankers.Rankers), for the ranking stage
    degraded: bool = False  # the embedding provider was down for the question, or notes wait for vectors

    def add(self, store: str, row: dict) -> Candidate:
        return self.cands.setdefault((store, row["id"]), Candidate((store, row["id"]), row))


def collect(stores: list[Store], embedder, cfg: Config, aq: AnalyzedQuery, made: dict | None = None) -> Pool:
    """The candidates of every store: full text first, while the query's vector is made beside it. made: the
    question's vectors by text from an earlier run of the same search (filled here)."""
    made = {} if made is None else made
    q = aq.q
    want_vec = q.mode in ("hybrid", "vector") and embedder.dim > 0 and any(s.with_vec for s in stores)
    want_text = bool(aq.match) and (q.mode in ("hybrid", "fts") or not want_vec)
    pool_size = max(cfg.candidates, q.limit * 2)
    # feedback is part of the weighted hybrid ranking it was measured in, not of plain full text
    fb = (cfg.feedback_docs, cfg.feedback_terms) if (
        q.mode == "hybrid" and want_vec and cfg.fusion == "weighted" and cfg.feedback_weight > 0) else None
    spaces = {st.name: space_filter(st, q.space, q.spaces) for st in stores}  # read once: every leg filters alike
    dated = q.since is not None or q.until is not None
    unembedded = False
    try:
        leg = vector_leg.VectorLeg(stores, embedder, q.text, pool_size, {
            st.name: spaces[st.name] is None and not dated and not q.under for st in stores}, q.limit, made) if want_vec else None
    except ProviderUnavailable:
        leg, unembedded = None, True
    pool = Pool(mode=q.mode, feedback=fb is not None, cons={st.name: st.con for st in stores},
                rankers=next((st.rankers for st in stores if st.rankers is not None), None),
                e5_query=_e5_of(q.text, q.keep, made) if q.mode == "hybrid" and cfg.rerank and cfg.ranker == "e5" and want_vec else None)
    text_done = want_text or (unembedded and bool(aq.match))
    if text_done:
        for st in stores:
            pool.feedback_words[st.name] = _collect_text(st, aq, pool_size, pool, spaces[st.name], fb, made)
    try:
        pool.vector = leg.vector if leg is not None else None
    except ProviderUnavailable:
        leg, unembedded = None, True
    if unembedded and not text_done and aq.match:  # a vector-only search runs on full text instead
        for st in stores:
            pool.feedback_words[st.name] = _collect_text(st, aq, pool_size, pool, spaces[st.name], None, made)
    # the question could not be embedded, or some notes wait for their vectors: this ranking misses a part
    pool.degraded = unembedded or (want_vec and any(st.with_vec and sql.vectors_pending(st.con) for st in stores))
    for st in stores:
        if st.with_vec and leg is not None:
            _collect_vectors(st, aq, leg, pool, spaces[st.name])
    if pool.vector is None and q.mode != "fts":
        pool.mode = "fts"  # no vectors: degrade to full text
    if dated and pool.vector is None:  # the vectors' nearest would hold every memory of a short window
        for st in stores:
            for r in sql.dated_chunks(st.con, q.since, q.until, pool_size, q.under, spaces[st.name]):
                pool.add(st.name, r)
    return pool


def _e5_of(text: str, keep: str, made: dict) -> Future:
    if ("e5", text) not in made:
        made["e5", text] = ranking_stage.start(text, keep)
    return made["e5", text]


def _collect_text(st: Store, aq: AnalyzedQuery, size: int, pool: Pool, space: str | None,
                  fb=None, made: dict | None = None) -> tuple[str, ...]:
    """This store's full-text candidates; returns the feedback words used (fb = (docs, words))."""
    q = aq.q
    held = full_text.doc_counts(st)
    found = sql.fts_search(st.con, query_match.match_for_store(st.con, aq.terms, held), size, under=q.under,
                           space=space, since=q.since, until=q.until, ranker=full_text.ranker(st, made))
    chunks = sql.chunk_count(st.con) if found else 0  # shared by both idf sums below
    ideal = query_match.ideal_bm25(st.con, q.text, chunks, held) if found else 1.0  # stores on one scale
    for rank, r in enumerate(found, 1):
        c = pool.add(st.name, r)
        c.bm25, c.fts_rank = r["bm25"] / ideal, rank
    if fb and fb[0] > 0 and fb[1] > 0 and found:
        return _feedback(st, aq, found[:fb[0]], fb[1], size, pool, space, chunks, made)
    return ()


def _collect_vectors(st: Store, aq: AnalyzedQuery, leg: vector_leg.VectorLeg, pool: Pool, space: str | None) -> None:
    """This store's nearest rows, and the cosine of every full-text candidate without one."""
    near, from_matrix = leg.nearest(st, aq.q, space)
    for rank, r in enumerate(near, 1):
        c = pool.add(st.name, r)
        c.similarity, c.vec_rank = r["similarity"], rank
    # full-text candidates the KNN pool missed still get their true cosine
    missed = [cid for (name, cid), c in pool.cands.items() if name == st.name and c.similarity is None]
    for cid, sim in vector_leg.cosines(st, leg.vector, missed, refresh=not from_matrix).items():
        pool.cands[(st.name, cid)].similarity = sim


def space_filter(st: Store, space: str | None, spaces: tuple[str, ...] = ()) -> str | tuple[str, ...] | None:
    """The SQL filter for a space: its name, "" for the default space, None when the store has no spaces
    (then the default space is every row and the faster unfiltered KNN applies); several spaces: their tuple."""
    if len(spaces) > 1:
        return None if "" in spaces and not sql.has_spaces(st.con) else spaces
    space = spaces[0] if spaces else space
    if space:
        return space
    return "" if sql.has_spaces(st.con) else None


def _feedback(st: Store, aq: AnalyzedQuery, top: list[dict], n_words: int, size: int, pool: Pool,
              space: str | None, chunks: int, made: dict | None = None) -> tuple[str, ...]:
    """Search again with the words the best hits share; their BM25 becomes a second full-text signal."""
    q = aq.q
    held = full_text.doc_counts(st)

    def count_upto(term: str, surface: str, cap: int) -> int:
        n = held(term) if held is not None else None
        return min(n, cap) if n is not None else sql.term_doc_count_upto(st.con, term, surface, cap)

    exp = feedback.expansion_terms(db.index_terms(st.con, q.text), sql.content_terms(st.con, top), count_upto,
                                   chunks, n_words)
    if not exp.words:
        return ()
    found = sql.fts_search(st.con, match_any(exp.words), size, under=q.under, space=space,
                           since=q.since, until=q.until, ranker=full_text.ranker(st, made))
    ideal = query_match.ideal_bm25(st.con, " ".join(exp.words), chunks, held) if found else 1.0
    for r in found:
        pool.add(st.name, r).bm25_feedback = r["bm25"] / ideal
    return exp.words
