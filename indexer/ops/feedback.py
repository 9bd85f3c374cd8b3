"""Pseudo-relevance feedback: words that the best full-text hits share, to expand a query."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from indexer.notes.textseg import is_stopword


LOOKUP_WORDS = 64


@dataclass(frozen=True)
class Expansion:
    """Expansion words as the user would type them, with their RM-style weights."""

    words: tuple[str, ...]
    weights: tuple[float, ...]


def expansion_terms(query_terms: list[tuple[str, str]], top_docs: list[list[tuple[str, str]]],
                    doc_counts, n_docs: int, n_terms: int) -> Expansion:
    """The n_terms best new words of the top documents.

    query_terms and each document are (surface word, indexed term) pairs, in the index's spelling
    so that "meetings" and "meeting" are one term. A word's weight sums, over the top documents,
    its share of the document's words times its inverse document frequency, so words that many
    of the best hits use, and few other notes do, win (relevance model with idf; Lavrenko and
    Croft 2001). doc_counts(terms) -> {term: chunks holding it}.
    """
    asked = {term for _w, term in query_terms}
    tf = Counter()
    surface: dict[str, str] = {}
    for doc in top_docs:
        kept = [(w, t) for w, t in doc if not is_stopword(w)]
        if not kept:
            continue
        counts = Counter(t for _w, t in kept)
        for w, t in kept:
            surface.setdefault(t, w)
        for t, n in counts.items():
            # a lone digit ("1" of a date) says nothing about the topic
            if t not in asked and not (t.isdigit() and len(t) < 2):
                tf[t] += n / len(kept)
    if not tf or n_terms <= 0:
        return Expansion((), ())
    # counting a word's documents reads its whole posting list: look up only the most used words
    shortlist = sorted(tf.items(), key=lambda x: (-x[1], x[0]))[:LOOKUP_WORDS]
    df = doc_counts([t for t, _share in shortlist])
    scored = sorted(((share * math.log((n_docs + 1) / (df.get(t, 0) + 0.5)), t) for t, share in shortlist),
                    key=lambda x: (-x[0], x[1]))
    best = [(s, t) for s, t in scored[:n_terms] if s > 0]
    return Expansion(tuple(surface[t] for _s, t in best), tuple(round(s, 6) for s, _t in best))
