"""The searches: full text, nearest vectors, spaces and date filters, records by id."""

from __future__ import annotations

from indexer.index import db
from indexer.index.sql.fts_topk import top_rowids
from indexer.index.sql.text_stats import chunk_count
from indexer.notes.spaces import FOLDER, space_prefix
from indexer.index.sql.schema import SELECT_CHUNKS, has_vec_table


# ---- searches --------------------------------------------------------------------------

def _filter_sql(parent_dirs=None, under=None, since=None, until=None) -> tuple[str, list]:
    clauses, params = [], []
    if parent_dirs:
        clauses.append("c.parent_dir IN (" + ", ".join("?" for _ in parent_dirs) + ")")
        params.extend(parent_dirs)
    if under:
        # a range per prefix, as spaces: the uri index reads only the folder's rows (LIKE scanned every row, 0.4 s
        # at 1M), the prefix is matched as written (LIKE folded ASCII case) and needs no escaping
        ors = []
        for prefix in under:
            past = _prefix_range(prefix)
            ors.append("(c.uri >= ? AND c.uri < ?)" if past is not None else "c.uri >= ?")
            params.extend([prefix, past] if past is not None else [prefix])
        clauses.append("(" + " OR ".join(ors) + ")")
    if since:  # a memory's own day (ISO text compares in time order)
        clauses.append("c.memory_date >= ?")
        params.append(since)
    if until:  # exclusive: the day after the last day asked for
        clauses.append("c.memory_date < ?")
        params.append(until)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


def _prefix_range(prefix: str) -> str | None:
    """The first string past every string that starts with prefix (None: no string is past them)."""
    head = prefix.rstrip(chr(0x10FFFF))
    return head[:-1] + chr(ord(head[-1]) + 1) if head else None


def space_bounds(space: str) -> tuple[str, str]:
    """The uri range of a space: from `spaces/NAME/` up to the first string past it ("" = all of spaces/).

    Ranges rather than LIKE: they use the uri index and need no escaping of names.
    """
    prefix = space_prefix(space) if space else FOLDER + "/"
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def with_space(where: str, params: list, space: str | tuple[str, ...] | None) -> tuple[str, list]:
    """Add a space filter: None none, "" the default space (outside spaces/), NAME that space only, a tuple of
    those: a row of any of them (one ranking over several spaces)."""
    if space is None:
        return where, params
    if isinstance(space, tuple):
        parts = [with_space("", [], one) for one in space]
        return (where + " AND (" + " OR ".join("(1" + w + ")" for w, _p in parts) + ")",
                [*params, *(v for _w, p in parts for v in p)])
    low, high = space_bounds(space)
    if space:
        return where + " AND c.uri >= ? AND c.uri < ?", [*params, low, high]
    return where + " AND (c.uri < ? OR c.uri >= ?)", [*params, low, high]


def chunks_holding(con, parts: list[str], space: str | None) -> list[dict]:
    """Records whose text holds every part (lower-case ASCII words and Chinese as written), in note order."""
    where = "".join(" AND instr(lower(c.content), ?) > 0" for _ in parts)
    where, params = with_space(where, list(parts), space)
    return db.rows(con, SELECT_CHUNKS + " FROM chunks c WHERE 1" + where + " ORDER BY c.uri, c.start_line", params)


def has_spaces(con) -> bool:
    """Whether any note of this store lives in a named space (else the default space is every row)."""
    return bool(db.rows(con, "SELECT 1 FROM chunks WHERE uri >= ? AND uri < ? LIMIT 1", space_bounds("")))


def fts_search(con, match: str, k: int, parent_dirs=None, under=None, space=None, since=None,
               until=None, ranker=None) -> list[dict]:
    """BM25 candidates (bigger `bm25` is better here: the sign of FTS5's rank is flipped).

    ranker(con, match, k, where, params): another way to the same top k (rowid, score), or None to leave it to
    FTS5 (a big store's kept common words)."""
    if not match:
        return []
    where, params = _filter_sql(parent_dirs, under, since, until)
    where, params = with_space(where, params, space)
    top = ranker(con, match, k, where, params) if ranker is not None else None
    if top is None:
        top = top_rowids(con, match, k, chunk_count(con), where, params)
    if not top:
        return []
    # the chunk rows of the k best only: joining every matching row read rows the LIMIT then dropped
    sql = SELECT_CHUNKS + ", c.fts_rowid AS r FROM chunks c WHERE c.fts_rowid IN (" + ",".join("?" * len(top)) + ")"
    found = {r.pop("r"): r for r in db.rows(con, sql, [rowid for rowid, _ in top])}
    return [{**found[rowid], "bm25": score} for rowid, score in top if rowid in found]


def vector_search(con, query_vec, k: int, parent_dirs=None, under=None, space=None, since=None,
                  until=None) -> list[dict]:
    """Cosine candidates with `similarity` = 1 - cosine distance; filters scan exactly."""
    if not has_vec_table(con):
        return []
    blob = db.vector_blob(query_vec)
    where, params = _filter_sql(parent_dirs, under, since, until)
    if space is not None and not where:
        found = _knn_in_space(con, blob, k, space)
        if found is not None:
            return found
    where, params = with_space(where, params, space)
    if where:
        sql = (SELECT_CHUNKS + ", 1.0 - vec_distance_cosine(v.embedding, ?) AS similarity FROM chunks c"
               " JOIN chunks_vec v ON v.id = c.id WHERE 1" + where + " ORDER BY similarity DESC LIMIT ?")
        return db.rows(con, sql, [blob, *params, k])
    sql = ("WITH knn AS (SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) " +
           SELECT_CHUNKS + ", 1.0 - knn.distance AS similarity FROM knn JOIN chunks c ON c.id = knn.id"
           " ORDER BY knn.distance")
    # a bigger k is an error of sqlite-vec's: a search for 2,049 hits or more (a pool of twice the limit) failed
    return db.rows(con, sql, [blob, min(int(k), KNN_MAX)])


def search_filters(under, space, since, until) -> tuple[str, list]:
    """A search's filters on `chunks c` (" AND ..."), as every leg applies them."""
    where, params = _filter_sql(None, under, since, until)
    return with_space(where, params, space)


def any_dated(con, since: str, until: str) -> bool:
    """Whether any memory is dated in [since, until) (ISO days): one probe of the memory_date index."""
    return bool(con.execute("SELECT 1 FROM chunks WHERE memory_date >= ? AND memory_date < ? LIMIT 1",
                            (since, until)).fetchall())


def dated_chunks(con, since: str | None, until: str | None, k: int, under=None, space=None) -> list[dict]:
    """Up to k chunks dated in [since, until), the newest first (as `recent` lists them): a search within dates
    that has no vectors to read finds every memory of a short window, not only those whose words match."""
    where, params = search_filters(under, space, since, until)
    return db.rows(con, SELECT_CHUNKS + " FROM chunks c WHERE c.memory_date IS NOT NULL" + where +
                   " ORDER BY c.memory_date DESC, c.uri, c.start_line LIMIT ?", [*params, int(k)])


def count_where(con, cap: int, under=None, space=None, since=None, until=None) -> int:
    """How many chunks a search's filters let through, counted up to cap (the filters' indexes alone)."""
    where, params = search_filters(under, space, since, until)
    return con.execute("SELECT count(*) FROM (SELECT 1 FROM chunks c WHERE 1" + where + " LIMIT ?)",
                       [*params, cap]).fetchall()[0][0]


def vec_rowids_where(con, limit: int, under=None, space=None, since=None, until=None) -> dict[str, int]:
    """The chunk ids a search's filters let through that have a vector, each with its vec0 rowid, at most limit
    of them: one join (1,361 rows of a time window at 1M: 4.6 ms, against 13 ms for the ids, then their rowids)."""
    if not has_vec_table(con):
        return {}
    where, params = search_filters(under, space, since, until)
    return dict(con.execute("SELECT c.id, v.rowid FROM chunks c JOIN chunks_vec_rowids v ON v.id = c.id WHERE 1"
                            + where + " LIMIT ?", [*params, limit]).fetchall())


def ids_passing(con, ids: list[str], under=None, space=None, since=None, until=None) -> set[str]:
    """Those of the chunk ids that a search's filters let through."""
    where, params = search_filters(under, space, since, until)
    out: set[str] = set()
    for i in range(0, len(ids), 500):
        part = list(ids[i:i + 500])
        out.update(r for (r,) in con.execute("SELECT c.id FROM chunks c WHERE c.id IN (" + ",".join("?" * len(part))
                                             + ")" + where, [*part, *params]))
    return out


KNN_MAX = 4096  # the largest k sqlite-vec answers


def _knn_in_space(con, blob, k: int, space: str) -> list[dict] | None:
    """A space's nearest rows from KNN over the whole table, asking for more until k of them come back.

    Joining the vector table row by row costs about 0.1 ms a row, so an exact scan of a big space
    takes seconds; KNN scans every vector in C in milliseconds. None when the space is so small a
    share of the store that KNN_MAX neighbours might not reach it: then its few rows are scanned.
    """
    where, params = with_space("", [], space)
    inside = db.rows(con, "SELECT count(*) AS n FROM chunks c WHERE 1" + where, params)[0]["n"]
    total = chunk_count(con)
    if inside == 0:
        return []
    want = min(total, max(2 * k, -(-2 * k * total // inside)))  # twice the share a space of this size should need
    while want <= KNN_MAX:
        found = db.rows(con, "WITH knn AS (SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) "
                        + SELECT_CHUNKS + ", 1.0 - knn.distance AS similarity FROM knn JOIN chunks c ON c.id = knn.id"
                        " WHERE 1" + where + " ORDER BY knn.distance LIMIT ?", [blob, want, *params, k])
        if len(found) >= min(k, inside) or want >= total:
            return found
        want = min(total, want * 4)
    return None


def find_similar(con, query_vec, threshold: float = 0.85, k: int = 5, exclude_uri: str | None = None,
                 space: str | None = None) -> list[dict]:
    """Chunks at least `threshold` cosine-similar to the vector, most similar first (space: as in searches)."""
    found = vector_search(con, query_vec, k + 20 if exclude_uri else k, space=space)
    return [r for r in found if r["similarity"] >= threshold and r["uri"] != exclude_uri][:k]


def vectors_with_uri(con):
    """Every vector as (id, uri, vector), streamed, for a pass over all of them at once."""
    for cid, uri, blob in db.stream(con, "SELECT v.id, c.uri, v.embedding FROM chunks_vec v JOIN chunks c ON c.id = v.id"):
        yield cid, uri, db.blob_vector(blob)


def chunk_exists(con, chunk_id: str) -> bool:
    return bool(db.rows(con, "SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)))


def chunks_by_ids(con, ids: list[str]) -> list[dict]:
    out = []
    for i in range(0, len(ids), 500):  # stay far below SQLite's limit on bound values
        part = list(ids[i:i + 500])
        out += db.rows(con, SELECT_CHUNKS + " FROM chunks c WHERE c.id IN (" + ", ".join("?" for _ in part) + ")", part)
    return out
