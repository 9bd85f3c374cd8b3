"""Pseudo-relevance feedback: words that the best full-text hits share, to expand a query."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass

from indexer.notes.textseg import is_stopword


LOOKUP_WORDS = 64
FIRST_CAP = 256  # chunks counted for a word before its bound is first tightened
CAP_GROWTH = 8  # each further count goes this many times as far


@dataclass(frozen=True)
class Expansion:
    """Expansion words as the user would type them, with their RM-style weights."""

    words: tuple[str, ...]
    weights: tuple[float, ...]


def expansion_terms(query_terms: list[tuple[str, str]], top_docs: list[list[tuple[str, str]]],
                    count_upto, n_docs: int, n_terms: int) -> Expansion:
    """The n_terms best new words of the top documents.

    query_terms and each document are (surface word, indexed term) pairs, in the index's spelling
    so that "meetings" and "meeting" are one term. A word's weight sums, over the top documents,
    its share of the document's words times its inverse document frequency, so words that many
    of the best hits use, and few other notes do, win (relevance model with idf; Lavrenko and
    Croft 2001). count_upto(term, surface word, cap) -> the chunks holding the term, counted no
    further than cap.
    """
    asked = {term for _w, term in query_terms}
    tf = Counter()
    held = Counter()  # top documents holding each term: the fewest chunks it can be in
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
                held[t] += 1
    if not tf or n_terms <= 0:
        return Expansion((), ())
    # even a capped count reads a posting list: look up only the most used words
    shortlist = sorted(tf.items(), key=lambda x: (-x[1], x[0]))[:LOOKUP_WORDS]
    best = _best_words(shortlist, held, surface, count_upto, n_docs, n_terms)
    return Expansion(tuple(surface[t] for _s, t in best), tuple(round(s, 6) for s, _t in best))


def _best_words(shortlist: list[tuple[str, float]], held: Counter, surface: dict[str, str], count_upto,
                n_docs: int, n_terms: int) -> list[tuple[float, str]]:
    """The n_terms words of the shortlist with the best share * idf (above 0), best first, ties by term.

    Counting a word's chunks reads its whole posting list, and the words the top hits share are
    often common: their lists are long. So each word is counted only as far as its place needs.
    A word held by h top documents is in at least h chunks, so its score is at most share * idf(h).
    The word with the highest bound is counted up to a cap: under it the count is exact and the
    score known; at it the bound falls to share * idf(cap) and the word waits its turn again. A
    known score above every other bound is in place. The words are those of counting every word.
    """
    def idf(df: int) -> float:
        return math.log((n_docs + 1) / (df + 0.5))

    # (-bound, 0 while the count is open so it is settled before an equal known score, term, next cap)
    heap = [(-share * idf(held[t]), 0, t, FIRST_CAP) for t, share in shortlist]
    heapq.heapify(heap)
    share_of = dict(shortlist)
    best: list[tuple[float, str]] = []
    while heap and len(best) < n_terms:
        bound, known, t, cap = heapq.heappop(heap)
        if known:
            if -bound <= 0:
                break  # every bound left is as low
            best.append((-bound, t))
            continue
        n = count_upto(t, surface[t], cap)
        if n < cap:
            heapq.heappush(heap, (-share_of[t] * idf(n), 1, t, 0))
        else:
            heapq.heappush(heap, (-share_of[t] * idf(cap), 0, t, cap * CAP_GROWTH))
    return best
