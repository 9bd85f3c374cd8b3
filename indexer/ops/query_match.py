"""The full-text MATCH of a query for one store: Chinese words the store never indexed become phrases."""

from __future__ import annotations

from indexer.index import sql
from indexer.notes.textseg import MAX_QUERY_TERMS, fts_match_expression, han_words, query_terms


def match_for_store(con, text: str) -> str:
    """fts_match_expression with this store's vocabulary: a multi-character Chinese query word that no
    chunk holds as a token is searched as its characters in a row (see textseg.han_phrase)."""
    words = han_words(query_terms(text)[:MAX_QUERY_TERMS])
    if not words:
        return fts_match_expression(text)
    counts = sql.term_doc_counts(con, words)
    return fts_match_expression(text, unindexed={w for w in words if not counts.get(w)})
