"""The full-text top k of one store: FTS5's, or on a big store served by a long-running process, the same top k
from its kept common words (kept.word_postings) with FTS5 scoring only the query's rarer words."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from indexer.index import db
from indexer.index import sql
from indexer.index.sql.fts_topk import K1
from indexer.kept.word_postings import WordPostings

# a filter (space, folder, dates) that lets this many rows through or fewer masks the scores; a wider one is
# checked down the ranking this far, then left to FTS5
FILTER_ROWS = 20_000


def ranker(st, made: dict | None = None):
    """fts_search's ranker for this store, or None when it keeps no common words. made: what the runs of one
    search share (a time-word question asks the same words inside its window, then outside it)."""
    words = _words(st)
    if words is None:
        return None
    return lambda con, match, k, where, params: top_rowids(words, con, match, k, where, params, made)


def doc_counts(st):
    """term -> rows holding it, from the store's kept common words (None for a word they do not hold), or None
    when the store keeps none: the counts FTS5 would give, without reading the word's rows again."""
    words = _words(st)
    return words.doc_count if words is not None and words.ready else None


def _words(st) -> WordPostings | None:
    return st.kept.words(st) if st.kept is not None else None


def top_rowids(words: WordPostings, con, match: str, k: int, where: str = "", params=(),
               made: dict | None = None) -> list | None:
    """The k best (fts rowid, bm25 with bigger better), best first, ties by rowid, as FTS5 ranks them;
    None when the kept words cannot answer (not ready, no common word in the query, a narrow filter)."""
    if not words.ready:
        with words.lock:
            words.refresh(con)  # starts reading or making them
        return None
    phrases = sql.phrases_of(match)
    if not phrases:
        return None
    single = [_one_term(con, p) for p in phrases]
    if not any(t is not None and words.holds(t) for t in single):
        return None
    scored = (made or {}).get(("scores", id(words), match))
    if scored is not None and (scored[1] is None or (not where and k <= scored[1])):
        return _best(scored[0], k, con, where, params)  # every row's whole sum, or pruned for as many or more
    with words.lock, _one_view(con):
        if not words.refresh(con):
            return None
        hot = [t for t in single if t is not None and words.holds(t)]
        cold = [p for p, t in zip(phrases, single) if t is None or not words.holds(t)]
        rows, tokens = sql.fts_totals(con)
        if where:
            few = sql.fts_rowids_where(con, where, params, NARROW_ROWS + 1)
            if len(few) <= NARROW_ROWS:  # a day, a small space: only its rows are scored
                return _score_few(words, np.unique(np.array(few, dtype=np.intp)), hot, cold, rows, tokens, con, k)
        acc = np.zeros(words.size, dtype=np.float64)
        if cold:
            part = sql.all_scores(con, " OR ".join(cold))
            if part:
                both = np.array(part, dtype=np.float64)
                at = both[:, 0].astype(np.intp)
                if at.max() >= len(acc):
                    return None  # a row the copy has not seen: cannot happen inside one view, but never guess
                acc[at] += both[:, 1]
        pruned_for = None if where else k  # a filter's k-th best is lower: every row gets its whole sum
        _add_words(words, hot, rows, tokens, acc, pruned_for)
    if made is not None:
        made["scores", id(words), match] = (acc, pruned_for)
    return _best(acc, k, con, where, params)


NARROW_ROWS = 5_000  # a filter letting at most this many rows through scores them alone (searched for in each list)


def _score_few(words: WordPostings, few: np.ndarray, hot: list[str], cold: list[str], rows: int, tokens: int, con,
               k: int) -> list[tuple[int, float]]:
    """The k best of a few given rows (sorted): each common word's count looked up in its list, the rarer
    words' part from FTS5, the same sums as scoring every row."""
    if not len(few) or few[-1] >= words.size:
        return []
    total = np.zeros(len(few), dtype=np.float64)
    if cold:
        part = sql.all_scores(con, " OR ".join(cold))
        if part:
            both = np.array(part, dtype=np.float64)
            order = np.argsort(both[:, 0], kind="stable")
            at_rows, shares = both[order, 0].astype(np.intp), both[order, 1]
            at = np.searchsorted(at_rows, few)
            hit = at < len(at_rows)
            hit[hit] = at_rows[at[hit]] == few[hit]
            total[hit] += shares[at[hit]]
    norm = words.norms(tokens / max(rows, 1))
    for term in hot:
        hit_rows = words.count(term)
        idf = max(1e-6, math.log((rows - hit_rows + 0.5) / (hit_rows + 0.5)))
        f = words.counts_at(term, few)
        has = f > 0
        total[has] += idf * ((f[has] * (K1 + 1.0)) / (f[has] + norm[few[has]]))
    keep = total > 0
    return _top(few[keep], np.round(total[keep], 9), k)


PRUNE_ROWS = 50_000  # a word holding this many rows is worth a bound check first (about 1.5 ms)


def _add_words(words: WordPostings, hot: list[str], rows: int, tokens: int, acc: np.ndarray, k: int | None) -> None:
    """acc += each common word's BM25 share, the biggest possible share first. Once the words left could not
    lift a row to the k-th best score so far (a lower bound of the final one), they are added only to the rows
    still able to place (MaxScore): a row outside them ends below the k best, whatever its partial sum.
    k None: every row gets its whole sum (a filter will pick rows from below the k best)."""
    avgdl = tokens / max(rows, 1)
    norm = words.norms(avgdl)
    items = []
    for term in hot:  # a word asked twice (two phrases of one term) counts twice, as in FTS5
        rowids, f = words.postings(term)
        hit = len(rowids)
        idf = max(1e-6, math.log((rows - hit + 0.5) / (hit + 0.5)))
        items.append((words.bound(term, idf, avgdl), idf, rowids, f))
    items.sort(key=lambda x: -x[0])
    left = sum(x[0] for x in items)
    live = None
    for ub, idf, rowids, f in items:
        # before each long list (the low-bound words come last), see whether the words left can still lift a
        # row that is not yet near the k best: a bound check reads acc once (about 1.5 ms at 1M rows)
        if k is not None and live is None and len(rowids) >= PRUNE_ROWS:
            floor = _kth_floor(acc, k)
            if floor > left:
                live = acc >= floor - left - 1e-8
        left -= ub
        if live is not None:
            keep = live[rowids]
            rowids, f = rowids[keep], f[keep]
        acc[rowids] += idf * ((f * (K1 + 1.0)) / (f + norm[rowids]))


def _one_term(con, phrase: str) -> str | None:
    terms = db.index_terms(con, phrase[1:-1].replace('""', '"'))
    return terms[0][1] if len(terms) == 1 else None


def _one_view(con):
    """One read transaction, so the copy's rows and FTS5's agree (none when the caller holds one)."""
    return contextlib.nullcontext() if con.in_transaction else db.read_snapshot(con)


def _best(acc: np.ndarray, k: int, con, where: str, params) -> list | None:
    if not where:
        cand = _above(acc, k)
        return _top(cand, np.round(acc[cand], 9), k)
    # a filter: the rows it lets through when they are few (a time window, a small space), read with its index
    passing = sql.fts_rowids_where(con, where, params, FILTER_ROWS + 1)
    if len(passing) <= FILTER_ROWS:
        at = np.array(passing, dtype=np.int64)
        at = at[(at < len(acc))]
        at = at[acc[at] > 0]
        return _top(at, np.round(acc[at], 9), k)
    # many pass: down the ranking until k of them do
    cand = np.flatnonzero(acc > 0)
    scores = np.round(acc[cand], 9)
    m = max(256, 4 * k)
    while True:
        top = _top(cand, scores, m)
        through = sql.fts_rowids_passing(con, [r for r, _s in top], where, params)
        got = [(r, s) for r, s in top if r in through]
        if len(got) >= k or len(top) == len(cand):
            return got[:k]
        if m >= FILTER_ROWS:
            return None
        m *= 8


BLOCK = 64


def _kth_floor(acc: np.ndarray, k: int) -> float:
    """At most the k-th best value of acc: the k-th best of the maxima of BLOCK-row groups (each is a row's
    value, so k of them are k rows). A group is every (len/BLOCK)-th row, not a run of neighbours: the maxima
    are then one elementwise pass over BLOCK long vectors, 0.27 ms at 1M rows against 1.1 ms for 64-row runs.
    0 when fewer than k groups score."""
    whole = len(acc) - len(acc) % BLOCK
    peaks = np.concatenate([np.maximum.reduce(acc[:whole].reshape(BLOCK, -1), axis=0), acc[whole:]])
    peaks = peaks[peaks > 0]
    return float(np.partition(peaks, len(peaks) - k)[len(peaks) - k]) if len(peaks) > k else 0.0


def _above(acc: np.ndarray, k: int) -> np.ndarray:
    """The rows that can be among the k best: at least the k-th best of the groups' maxima (a lower bound of
    the k-th best row, as they are rows too), less the rounding the ranking compares at. Partitioning every
    scored row took 5-7 ms at 1M; the groups' maxima are 1/64 of them."""
    floor = _kth_floor(acc, k)
    return np.flatnonzero(acc >= max(floor - 1e-9, np.finfo(np.float64).tiny))


def _top(cand: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    if len(cand) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        cand, scores = cand[keep], scores[keep]
    order = np.lexsort((cand, -scores))[:k]
    return [(int(cand[i]), float(scores[i])) for i in order]
