"""Full-text top k that scores only the rows able to reach it: FTS5's own BM25, same ranking, fewer rows.

FTS5 scores every row holding any query word, so a query with a word in half the chunks scores half
the index. A word adds less than idf * (k1 + 1) to a row's score. When the common words' bounds sum
to less than the k-th best score, no row holding only common words can reach the top k: the rows
holding a rarer word are scored with every word (MaxScore), and the rest are never scored. The
k-th best score is not known beforehand; the rows of the rarest words, scored with every word, give
a floor for it.
"""

from __future__ import annotations

import math
import re

from indexer.index import db
from indexer.index.sql.text_stats import phrase_doc_counts

WEIGHTS = (1.0, 0.3, 0.6)  # content, uri, section: the weights every full-text search uses
BM25 = f"bm25(chunks_fts, {', '.join(map(str, WEIGHTS))})"
K1 = 1.2  # FTS5's bm25 k1: one word adds less than idf * (K1 + 1)
B = 0.75  # FTS5's bm25 b (length normalisation)
SLACK = 1.01  # the bounds use the chunk count, FTS5 its own row count: equal in a sound index, kept apart anyway
# Measured at 100k chunks: a plain search costs about 0.42 us per row holding a query word, a pruned
# one 1.5 us per row it scores plus 0.04 us per row holding any (FTS5 still counts every word's rows).
# Both shares only decide how fast: the ranking is the same with any of them.
PROBE_SHARE = 0.08  # the rarest phrases scored first hold at most this share of the rows a plain search scores
SHARE = 0.18  # the phrases a pruned search scores hold at most this share of them
# and at most this many rows beyond the rarest phrase's own: at 1M chunks 8% is 80k rows, and scoring them
# cost more than the floor they raise saves (fts p50 / p95 in-process 52 / 235 ms -> 37 / 176 ms, BENCHMARKS)
PROBE_ROWS = 10_000
PLAIN_ROWS = 20_000  # below this many rows a plain search is as quick as pruning

_PHRASE = re.compile(r'"(?:[^"]|"")*"')
_PHRASES = re.compile(rf'{_PHRASE.pattern}(?: OR {_PHRASE.pattern})*')


def phrases_of(match: str) -> list[str] | None:
    """The quoted phrases of an `"a" OR "b"` expression (as textseg writes them); None for any other shape."""
    return _PHRASE.findall(match) if _PHRASES.fullmatch(match) else None


def top_rowids(con, match: str, k: int, chunks: int, where: str = "", params=()) -> list[tuple[int, float]]:
    """The k best (fts rowid, bm25 with bigger better) for the MATCH, best first, ties by rowid (scores
    are rounded to 9 decimals: the two ways of scoring differ in the last bits).

    chunks: the store's chunk count. where: filters on `chunks c` (" AND ..."), with their params;
    the bound holds within any filter, as every score it is compared with is a filtered row's.
    """
    phrases = phrases_of(match)
    if not phrases or len(phrases) < 2:
        return _plain(con, match, k, where, params)
    counts = phrase_doc_counts(con, phrases)
    if sum(counts) < PLAIN_ROWS:
        return _plain(con, match, k, where, params)
    rarest = sorted(range(len(phrases)), key=lambda i: (counts[i], i))
    probe, held = [], 0
    for i in rarest[:-1]:
        if probe and held + counts[i] > max(min(PROBE_SHARE * sum(counts), PROBE_ROWS), k):
            break
        probe.append(i)
        held += counts[i]
    if held < k:  # fewer than k rows hold a rare word: rows with only common ones may place
        return _plain(con, match, k, where, params)
    found = _rows_holding(con, [phrases[i] for i in probe], match, k, where, params)
    if len(found) < k:
        return _plain(con, match, k, where, params)
    # found[-1] is the k-th best true score among some rows: the k-th best of all is at least that
    common = _under(counts, max(chunks, 1), [i for i in reversed(rarest) if i not in probe],
                    found[-1][1] / SLACK)
    essential = [i for i in range(len(phrases)) if i not in common]
    if len(essential) == len(probe):
        return found
    if sum(counts[i] for i in essential) > SHARE * sum(counts):
        return _plain(con, match, k, where, params)
    return _rows_holding(con, [phrases[i] for i in essential], match, k, where, params)


def _under(counts: list[int], chunks: int, commonest: list[int], floor: float) -> set[int]:
    """The commonest phrases whose bounds together stay under the floor: no row holding only these can place."""
    common, bound = set(), 0.0
    for i in commonest:
        bound += _idf(chunks, counts[i]) * (K1 + 1.0) * SLACK
        if bound >= floor:
            break
        common.add(i)
    return common


def _rows_holding(con, some: list[str], match: str, k: int, where: str, params) -> list[tuple[int, float]]:
    """The k best rows holding any of `some`, each scored with every phrase of the MATCH."""
    part = " OR ".join(some)
    sql = (f"WITH e AS MATERIALIZED (SELECT chunks_fts.rowid AS r, {BM25} AS part FROM chunks_fts{_join(where)}"
           f" WHERE chunks_fts MATCH ?{where}) SELECT chunks_fts.rowid AS r, round(e.part - {BM25}, 9) AS score"
           " FROM chunks_fts JOIN e ON e.r = chunks_fts.rowid WHERE chunks_fts MATCH ? ORDER BY score DESC, r LIMIT ?")
    # (some) AND (all) is scored by FTS5 over every phrase plus `some` again: taking off the score
    # of `some` alone leaves each row's true score
    return [(r["r"], r["score"]) for r in db.rows(con, sql, [part, *params, f"({part}) AND ({match})", k])]


def _join(where: str) -> str:
    return " JOIN chunks c ON c.fts_rowid = chunks_fts.rowid" if where else ""


def _plain(con, match: str, k: int, where: str, params) -> list[tuple[int, float]]:
    # ORDER BY names the column alone: an expression over it would compute bm25() a second time a row
    sql = (f"SELECT chunks_fts.rowid AS r, round(-{BM25}, 9) AS score FROM chunks_fts{_join(where)}"
           f" WHERE chunks_fts MATCH ?{where} ORDER BY score DESC, r LIMIT ?")
    return [(r["r"], r["score"]) for r in db.rows(con, sql, [match, *params, k])]


def all_scores(con, match: str) -> list[tuple[int, float]]:
    """(fts rowid, bm25 with bigger better) of every row the MATCH holds, unrounded: one part of a sum."""
    return con.execute(f"SELECT rowid, -{BM25} FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)).fetchall()


def _idf(chunks: int, holding: int) -> float:
    """FTS5's idf, with its floor for words in more than half of the rows."""
    ratio = (chunks - holding + 0.5) / (holding + 0.5)
    return math.log(ratio) if ratio > 1.0 else 1e-6
