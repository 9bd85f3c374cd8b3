"""The full-text side of a query in one store: its MATCH (Chinese words the store never indexed become
phrases) and the score of an ideal match, which puts the BM25 of different stores on one scale."""

from __future__ import annotations

import math

from indexer.index import db
from indexer.index import sql
from indexer.notes.textseg import MAX_QUERY_TERMS, han_words, match_terms, query_terms


def match_for_store(con, terms, held=None) -> str:
    """The MATCH of a query's words with this store's vocabulary: a multi-character Chinese query word that
    no chunk holds as a token is searched as its characters in a row (see textseg.han_phrase). held: counts known
    without FTS5, as in ideal_bm25."""
    words = han_words(terms)
    if not words:
        return match_terms(terms)
    known = {w: n for w in words if held is not None and (n := held(w)) is not None}
    counts = {**sql.term_doc_counts(con, [w for w in words if w not in known]), **known}
    return match_terms(terms, unindexed={w for w in words if not counts.get(w)})


def ideal_bm25(con, text: str, chunks: int, held=None) -> float:
    """What a chunk holding each of the query's terms once would score in a store of `chunks` chunks: FTS5's idf summed
    over the terms. BM25 from different stores, each divided by its own ideal, is on one scale: a store
    where the words are rare no longer outranks one where they are common for a weaker match. held: term -> count
    or None, counts known without FTS5 (a big store's kept common words)."""
    kept = set(query_terms(text)[:MAX_QUERY_TERMS])
    terms = sorted({term for surface, term in db.index_terms(con, text) if surface.casefold() in kept})
    if not terms:
        return 1.0
    known = {t: n for t in terms if held is not None and (n := held(t)) is not None}
    counts = {**sql.term_doc_counts(con, [t for t in terms if t not in known]), **known}
    return sum(_idf(chunks, counts.get(t, 0)) for t in terms)


def _idf(chunks: int, holding: int) -> float:
    """FTS5's idf, floored as FTS5 floors it for words in more than half of the chunks. The two counts
    are read apart, so a writer's commit between them may leave more holders than chunks."""
    ratio = (chunks - holding + 0.5) / (holding + 0.5)
    return math.log(ratio) if ratio > 1.0 else 1e-6
