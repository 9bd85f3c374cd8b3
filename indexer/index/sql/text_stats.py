"""Full-text statistics every query reads again (chunk count, words' and phrases' document counts),
kept per connection while the full-text index is unchanged."""

from __future__ import annotations

from indexer.index import db
from indexer.index.sql.fts_rows import fts_totals
from indexer.notes.textseg import match_any


def _known(con) -> dict:
    """FTS5 rewrites its structure record whenever its content changes (each write adds a segment and
    bumps a counter in it), so the record names the content. A commit that only moves counters (every
    search counts its hits) leaves it alone and keeps what was read; this connection's own writes
    (total_changes) start afresh even before FTS5 has flushed them."""
    found = db.rows(con, "SELECT block FROM chunks_fts_data WHERE id = 10")
    return db.memo(con, (found[0]["block"] if found else None, con.total_changes()))


def text_memo(con) -> dict:
    """The per-connection memo of figures that hold while the store's text is unchanged."""
    return _known(con)


def chunk_count(con) -> int:
    """Chunks as the full-text index counts its rows (the number its BM25 divides by): one record read, where
    count(*) walks an index (5 ms at 1M chunks, again after every write)."""
    known = _known(con)
    if "chunks" not in known:
        known["chunks"] = fts_totals(con)[0]
    return known["chunks"]


def term_doc_counts(con, terms: list[str]) -> dict[str, int]:
    """How many chunks hold each indexed term (FTS5 vocabulary, made per connection in temp)."""
    if not terms:
        return {}
    known = _known(con)
    missing = [t for t in dict.fromkeys(terms) if ("df", t) not in known]
    if missing:
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_terms USING fts5vocab(main, chunks_fts, 'row')")
        for t in missing:
            known["df", t] = 0
        for i in range(0, len(missing), 500):  # under SQLite's bound-value limit
            part = missing[i:i + 500]
            sql = f"SELECT term, doc FROM temp.chunks_fts_terms WHERE term IN ({','.join('?' * len(part))})"
            known.update((("df", r["term"]), r["doc"]) for r in db.rows(con, sql, part))
    return {t: known["df", t] for t in terms if known["df", t]}


def term_doc_count_upto(con, term: str, surface: str, cap: int) -> int:
    """How many chunks hold an indexed term, counted no further than cap: min(count, cap).

    FTS5 counts a word's chunks by reading its whole posting list (0.6 ms for a word in 20,000 of
    100k chunks); a MATCH stops reading at its LIMIT. surface: a word that is this term alone.
    """
    known = _known(con)
    if ("df", term) in known:
        return min(known["df", term], cap)
    if known.get(("df at least", term), 0) >= cap:
        return cap
    alone = known.get(("alone", surface, term))
    if alone is None:  # tokenised on its own, the word must be this term, or a MATCH counts another
        alone = known["alone", surface, term] = db.index_terms(con, surface) == [(surface, term)]
    if not alone:
        return min(term_doc_counts(con, [term]).get(term, 0), cap)
    n = db.rows(con, "SELECT count(*) AS n FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                [match_any([surface]), cap])[0]["n"]
    if n < cap:
        known["df", term] = n
    else:
        known["df at least", term] = cap
    return n


def phrase_doc_counts(con, phrases: list[str]) -> list[int]:
    """How many chunks match each quoted FTS5 phrase: a one-word phrase's count is its word's (read
    with the query's other words), a longer phrase's is counted."""
    known = _known(con)
    words = {p: db.index_terms(con, p[1:-1].replace('""', '"')) for p in phrases if ("phrase", p) not in known}
    single = {p: w[0][1] for p, w in words.items() if len(w) == 1}
    counts = term_doc_counts(con, list(single.values()))
    for p, w in words.items():
        if p in single:
            known["phrase", p] = counts.get(single[p], 0)
        else:
            known["phrase", p] = db.rows(con, "SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?",
                                         [p])[0]["n"]
    return [known["phrase", p] for p in phrases]


TERMS_KEPT = 1000  # chunks whose words are kept: a few MB, the best hits of recent queries


def content_terms(con, rows: list[dict]) -> list[list[tuple[str, str]]]:
    """Each chunk row's (surface word, indexed term) pairs, kept by text: the best hits of one query
    are often the best of the next, and reading a chunk's words again costs more than its search."""
    known = _known(con)
    out = []
    for r in rows:
        key = ("terms", r["content_hash"])
        terms = known.get(key)
        if terms is None:
            terms = db.index_terms(con, r["content"])
            if known.get("terms kept", 0) < TERMS_KEPT:
                known[key] = terms
                known["terms kept"] = known.get("terms kept", 0) + 1
        out.append(terms)
    return out
