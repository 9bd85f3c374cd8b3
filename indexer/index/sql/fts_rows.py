"""What FTS5 keeps for its BM25, read for a copy of common words' rows kept beside the index: the table's
totals, each row's length in tokens, a word's rows and counts, and which rows were written or removed since."""

from __future__ import annotations



def varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, the ninth byte whole), as FTS5 writes its records."""
    out, i, n = [], 0, len(blob)
    while i < n:
        v = 0
        for j in range(9):
            c = blob[i]
            i += 1
            if j == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(v)
    return out


def fts_totals(con) -> tuple[int, int]:
    """(rows, tokens in every column of every row): FTS5's averages record, what its bm25 divides by."""
    found = con.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchall()
    if not found:
        return 0, 0
    values = varints(found[0][0])
    return (values[0], sum(values[1:])) if values else (0, 0)


def fts_structure(con) -> bytes | None:
    """FTS5's structure record: rewritten by every change of the full-text index."""
    found = con.execute("SELECT block FROM chunks_fts_data WHERE id = 10").fetchall()
    return found[0][0] if found else None


def row_lengths(con):
    """(fts rowid, tokens in all its columns) of every row, streamed in rowid order."""
    for rowid, sz in con.execute("SELECT id, sz FROM chunks_fts_docsize ORDER BY id"):
        yield rowid, sum(varints(sz))


def row_lengths_for(con, rowids: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for i in range(0, len(rowids), 500):
        part = rowids[i:i + 500]
        out.update((r, sum(varints(sz))) for r, sz in con.execute(
            f"SELECT id, sz FROM chunks_fts_docsize WHERE id IN ({','.join('?' * len(part))})", part))
    return out


def _vocab(con, kind: str) -> str:
    name = f"chunks_fts_{kind}s"
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, chunks_fts, '{kind}')")
    return f"temp.{name}"


def terms_in_rows(con, at_least: int) -> list[tuple[str, int]]:
    """(term, rows holding it) of every indexed term in at least that many rows (reads the whole index)."""
    table = _vocab(con, "row")
    return [(t, n) for t, n in con.execute(f"SELECT term, doc FROM {table} WHERE doc >= ?", (at_least,))]


def term_rows(con, term: str) -> list[tuple[int, int, int, int]]:
    """(fts rowid, instances in content, in uri, in section) of every row holding the term, in rowid order."""
    table = _vocab(con, "instance")
    return con.execute(f"SELECT doc, sum(col = 'content'), sum(col = 'uri'), sum(col = 'section') FROM {table}"
                       " WHERE term = ? GROUP BY doc ORDER BY doc", (term,)).fetchall()


def fts_rowid_top(con) -> int:
    return con.execute("SELECT coalesce(max(fts_rowid), 0) FROM chunks").fetchall()[0][0]


def fts_rows_after(con, rowid: int, upto: int | None = None) -> list[tuple[int, str, str, str]]:
    """(fts rowid, content, uri, section) of the rows past rowid (and up to upto), in rowid order."""
    return con.execute("SELECT fts_rowid, content, uri, section FROM chunks WHERE fts_rowid > ? AND fts_rowid <= ?"
                       " ORDER BY fts_rowid", (rowid, upto if upto is not None else 2 ** 62)).fetchall()


def fts_rows_among(con, rowids: list[int]) -> list[tuple[int, str, str, str]]:
    out = []
    for i in range(0, len(rowids), 500):
        part = rowids[i:i + 500]
        out += con.execute("SELECT fts_rowid, content, uri, section FROM chunks WHERE fts_rowid IN"
                           f" ({','.join('?' * len(part))})", part).fetchall()
    return sorted(out)


def hashes_for_fts_rowids(con, rowids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i in range(0, len(rowids), 500):
        part = rowids[i:i + 500]
        out.update(con.execute(f"SELECT fts_rowid, content_hash FROM chunks WHERE fts_rowid IN"
                               f" ({','.join('?' * len(part))})", part).fetchall())
    return out


def fts_rowids_passing(con, rowids: list[int], where: str, params) -> set[int]:
    """Those of the rows that pass a filter on `chunks c` (" AND ...")."""
    out: set[int] = set()
    for i in range(0, len(rowids), 500):
        part = rowids[i:i + 500]
        out.update(r for (r,) in con.execute(f"SELECT c.fts_rowid FROM chunks c WHERE c.fts_rowid IN"
                                             f" ({','.join('?' * len(part))}){where}", [*part, *params]))
    return out


def fts_rowids_where(con, where: str, params, limit: int) -> list[int]:
    """The rows a filter on `chunks c` (" AND ...") lets through, at most limit of them."""
    return [r for (r,) in con.execute(f"SELECT c.fts_rowid FROM chunks c WHERE 1{where} LIMIT ?", [*params, limit])]
