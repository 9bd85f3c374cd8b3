"""All SQL of one index file: schema, meta, upsert by content hash, searches, counters, stats."""

from __future__ import annotations

import re
import time

import numpy as np

from indexer.index import db
from indexer.errors import DiskFullError, IndexMismatchError, ReadOnlyStoreError, StoreBusyError, StoreError
from indexer.models import Note
from indexer.notes.spaces import FOLDER, space_prefix

SCHEMA_VERSION = "2"  # 2: kind and memory_date (one row per memory)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
  uri TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  sha256 TEXT NOT NULL, indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
  id TEXT PRIMARY KEY,
  fts_rowid INTEGER NOT NULL UNIQUE,  -- stable integer key for FTS5 (VACUUM may renumber implicit rowids)
  uri TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
  content TEXT NOT NULL, content_hash TEXT NOT NULL, parent_dir TEXT NOT NULL,
  type TEXT NOT NULL, section TEXT NOT NULL, importance INTEGER NOT NULL,
  reinforcement REAL NOT NULL DEFAULT 0, access_count INTEGER NOT NULL DEFAULT 0,
  token_count INTEGER NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
  accessed_at REAL, strength REAL NOT NULL DEFAULT 1.0, evergreen INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '[]', kind TEXT NOT NULL DEFAULT 'section', memory_date TEXT);

CREATE INDEX IF NOT EXISTS chunks_parent_dir ON chunks(parent_dir);
CREATE INDEX IF NOT EXISTS chunks_content_hash ON chunks(content_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  content, uri, section, content='chunks', content_rowid='fts_rowid', tokenize='porter mdmem');
"""

_INDEXES = """
CREATE INDEX IF NOT EXISTS chunks_uri ON chunks(uri);
CREATE INDEX IF NOT EXISTS chunks_parent_dir ON chunks(parent_dir);
CREATE INDEX IF NOT EXISTS chunks_content_hash ON chunks(content_hash);
CREATE INDEX IF NOT EXISTS chunks_type ON chunks(type);
CREATE INDEX IF NOT EXISTS chunks_memory_date ON chunks(memory_date);
"""
# schema 1 -> 2 in place; the chunker version changed with it, so `mdmem rebuild` then re-chunks the notes
_MIGRATE_1_2 = {"kind": "ALTER TABLE chunks ADD COLUMN kind TEXT NOT NULL DEFAULT 'section'",
                "memory_date": "ALTER TABLE chunks ADD COLUMN memory_date TEXT"}

_COLUMNS = ("id", "uri", "start_line", "end_line", "section", "content", "content_hash", "parent_dir",
            "type", "importance", "reinforcement", "access_count", "token_count", "created_at",
            "updated_at", "accessed_at", "strength", "evergreen", "tags", "kind", "memory_date")
_SELECT = "SELECT " + ", ".join("c." + c for c in _COLUMNS)


# ---- schema and identity -------------------------------------------------------------

def has_schema(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'chunks'"))


def init_schema(con) -> None:
    with db.transaction(con):
        con.execute(_SCHEMA)
        version = read_meta(con).get("schema_version")
        if version == "1":
            have = {r["name"] for r in db.rows(con, "SELECT name FROM pragma_table_info('chunks')")}
            for column, statement in _MIGRATE_1_2.items():
                if column not in have:
                    con.execute(statement)
            version = None
        con.execute(_INDEXES)
        if version is None:
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,))


def read_meta(con) -> dict:
    return {r["key"]: r["value"] for r in db.rows(con, "SELECT key, value FROM meta")}


def write_meta(con, values: dict) -> None:
    for key, value in values.items():
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, str(value)))


def has_vec_table(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'chunks_vec'"))


def create_vec_table(con, dim: int) -> None:
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                f"id TEXT PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine)")


def identity_problems(meta: dict, model_id: str, dim: int, chunker: str, tokenizer: str) -> list[str]:
    """What in the index's recorded identity disagrees with the configured one."""
    problems = []
    if meta.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        problems.append(f"schema {meta['schema_version']} (this mdmem writes {SCHEMA_VERSION})")
    # another chunker is no problem: the next sync re-chunks every note (ops/sync.chunking_id);
    # another tokenizer would leave full-text rows of unchanged text tokenised the old way
    if meta.get("tokenizer") not in (None, tokenizer):
        problems.append(f"tokenizer {meta['tokenizer']} (configured {tokenizer})")
    stored_model = meta.get("embedder")
    if dim and stored_model not in (None, "none", model_id):
        problems.append(f"embedder {stored_model} (configured {model_id})")
    return problems


def check_identity(con, model_id: str, dim: int, chunker: str, tokenizer: str) -> bool:
    """Like bind_identity without writing (a reader's connection); whether vectors may be read."""
    meta = read_meta(con)
    problems = identity_problems(meta, model_id, dim, chunker, tokenizer)
    if problems:
        raise IndexMismatchError(f"index was built with {', '.join(problems)}; run `mdmem rebuild` to rebuild it from the notes")
    return bool(dim) and meta.get("embedder") == model_id and has_vec_table(con)


def bind_identity(con, model_id: str, dim: int, chunker: str, tokenizer: str) -> bool:
    """Record or check what built this index; returns whether vectors may be read and written.

    An index built without vectors is upgraded in place; one built with another model is
    never mixed: searching needs `mdmem rebuild`, and a text-only embedder just skips vectors.
    """
    meta = read_meta(con)
    problems = identity_problems(meta, model_id, dim, chunker, tokenizer)
    if problems:
        raise IndexMismatchError(f"index was built with {', '.join(problems)}; run `mdmem rebuild` to rebuild it from the notes")
    stored_model = meta.get("embedder")
    if not dim:
        if stored_model is None:
            with db.transaction(con):
                write_meta(con, {"embedder": "none", "dimension": 0, "chunker": chunker, "tokenizer": tokenizer})
        return False
    if stored_model != model_id:
        with db.transaction(con):
            create_vec_table(con, dim)
            write_meta(con, {"embedder": model_id, "dimension": dim, "chunker": chunker, "tokenizer": tokenizer})
    return True


# ---- documents -----------------------------------------------------------------------

def get_document(con, uri: str) -> dict | None:
    found = db.rows(con, "SELECT uri, size, mtime_ns, sha256, indexed_at FROM documents WHERE uri = ?", (uri,))
    return found[0] if found else None


def all_documents(con) -> dict[str, dict]:
    return {r["uri"]: r for r in db.rows(con, "SELECT uri, size, mtime_ns, sha256, indexed_at FROM documents")}


def put_document(con, uri: str, size: int, mtime_ns: int, sha256: str) -> None:
    con.execute("INSERT OR REPLACE INTO documents(uri, size, mtime_ns, sha256, indexed_at) VALUES(?, ?, ?, ?, ?)",
                (uri, size, mtime_ns, sha256, time.time()))


# ---- chunks: writes --------------------------------------------------------------------

def chunks_for_uri(con, uri: str) -> list[dict]:
    return db.rows(con, _SELECT + ", c.fts_rowid FROM chunks c WHERE c.uri = ? ORDER BY c.start_line", (uri,))


def vector_for_id(con, chunk_id: str) -> np.ndarray | None:
    """A record's vector; the caller knows the store has vectors (Store.with_vec)."""
    found = db.rows(con, "SELECT embedding FROM chunks_vec WHERE id = ?", (chunk_id,))
    return db.blob_vector(found[0]["embedding"]).copy() if found else None


def vector_for_hash(con, content_hash: str) -> np.ndarray | None:
    """The vector of any record with this text (the caller knows the store has vectors)."""
    for r in db.rows(con, "SELECT id FROM chunks WHERE content_hash = ?", (content_hash,)):
        v = vector_for_id(con, r["id"])
        if v is not None:
            return v
    return None


def _delete_chunk_row(con, row: dict, with_vec: bool) -> None:
    con.execute("INSERT INTO chunks_fts(chunks_fts, rowid, content, uri, section) VALUES('delete', ?, ?, ?, ?)",
                (row["fts_rowid"], row["content"], row["uri"], row["section"]))
    con.execute("DELETE FROM chunks WHERE id = ?", (row["id"],))
    if with_vec:
        con.execute("DELETE FROM chunks_vec WHERE id = ?", (row["id"],))


def insert_chunk(con, row: dict) -> None:
    """One chunk row and its FTS row (call inside a transaction)."""
    next_rowid = con.execute("SELECT coalesce(max(fts_rowid), 0) + 1 FROM chunks").fetchall()[0][0]
    con.execute(
        "INSERT INTO chunks(id, fts_rowid, uri, start_line, end_line, content, content_hash, parent_dir, type,"
        " section, importance, reinforcement, access_count, token_count, created_at, updated_at, accessed_at,"
        " strength, evergreen, tags, kind, memory_date)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (row["id"], next_rowid, row["uri"], row["start_line"], row["end_line"], row["content"], row["content_hash"],
         row["parent_dir"], row["type"], row["section"], row["importance"], row["reinforcement"],
         row["access_count"], row["token_count"], row["created_at"], row["updated_at"], row["accessed_at"],
         row["strength"], row["evergreen"], row["tags"], row["kind"], row["memory_date"]))
    con.execute("INSERT INTO chunks_fts(rowid, content, uri, section) VALUES(?, ?, ?, ?)",
                (next_rowid, row["content"], row["uri"], row["section"]))


def delete_chunk(con, row: dict, with_vec: bool) -> None:
    """A chunk row (as chunks_for_uri gives it) with its FTS row and vector."""
    _delete_chunk_row(con, row, with_vec)


def put_vector(con, chunk_id: str, vec) -> None:
    con.execute("DELETE FROM chunks_vec WHERE id = ?", (chunk_id,))  # vec0 has no UPSERT
    con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (chunk_id, db.vector_blob(vec)))


def move_chunk(con, old_id: str, new_id: str, start_line: int, end_line: int, with_vec: bool) -> None:
    """Unchanged text whose lines moved: new id and lines; counters, FTS row and vector stay."""
    con.execute("UPDATE chunks SET id = ?, start_line = ?, end_line = ?, updated_at = ? WHERE id = ?",
                (new_id, start_line, end_line, time.time(), old_id))
    if with_vec:
        vec = vector_for_id(con, old_id)
        con.execute("DELETE FROM chunks_vec WHERE id = ?", (old_id,))
        if vec is not None:
            put_vector(con, new_id, vec)


_META_FIELDS = ("type", "importance", "evergreen", "tags", "token_count", "kind", "memory_date")


def update_chunk_meta(con, chunk_id: str, fields: dict) -> None:
    """What a note's front matter or an item's inline marks say, for a row whose text is unchanged."""
    con.execute("UPDATE chunks SET " + ", ".join(f"{k} = ?" for k in _META_FIELDS) + " WHERE id = ?",
                [fields[k] for k in _META_FIELDS] + [chunk_id])


def meta_differs(row: dict, fields: dict) -> bool:
    return any(row[k] != fields[k] for k in _META_FIELDS)


def hashes_for_uri(con, uri: str) -> set[str]:
    return {r["h"] for r in db.rows(con, "SELECT content_hash AS h FROM chunks WHERE uri = ?", (uri,))}


def delete_by_uri(con, uri: str, with_vec: bool | None = None) -> int:
    """Remove a file's chunks, vectors, FTS rows and document row; returns chunks removed."""
    if with_vec is None:
        with_vec = has_vec_table(con)
    old = chunks_for_uri(con, uri)
    for r in old:
        _delete_chunk_row(con, r, with_vec)
    con.execute("DELETE FROM documents WHERE uri = ?", (uri,))
    return len(old)


def hashes_missing_vectors(con) -> dict[str, dict]:
    """content_hash -> row (content, kind) of chunks that have no vector yet (indexed while no model loaded)."""
    if not has_vec_table(con):
        return {}
    have = {r["id"] for r in db.rows(con, "SELECT id FROM chunks_vec")}
    # runs on every sync: read ids only, and the text of just the chunks that lack a vector
    missing = [r["id"] for r in db.rows(con, "SELECT id FROM chunks") if r["id"] not in have]
    out = {}
    for r in chunks_by_ids(con, missing):
        out.setdefault(r["content_hash"], r)
    return out


def fill_vectors(con, vectors: dict[str, np.ndarray]) -> int:
    have = {r["id"] for r in db.rows(con, "SELECT id FROM chunks_vec")}
    n = 0
    for r in db.rows(con, "SELECT id, content_hash FROM chunks"):
        if r["id"] not in have and r["content_hash"] in vectors:
            put_vector(con, r["id"], vectors[r["content_hash"]])
            n += 1
    return n


def vectors_by_hash(con) -> dict[str, np.ndarray]:
    """Every stored vector keyed by its text's hash (for rebuilds that reuse embeddings)."""
    if not has_vec_table(con):
        return {}
    out = {}
    for r in db.rows(con, "SELECT c.content_hash AS h, v.embedding AS e FROM chunks_vec v JOIN chunks c ON c.id = v.id"):
        out.setdefault(r["h"], db.blob_vector(r["e"]).copy())
    return out


def counters_by_uri_hash(con) -> list[dict]:
    return db.rows(con, "SELECT uri, content_hash, reinforcement, access_count, accessed_at, strength, created_at"
                        " FROM chunks WHERE reinforcement > 0 OR access_count > 0 OR strength < 1.0")


def restore_counters(con, saved: list[dict]) -> int:
    n = 0
    for r in saved:
        n += con.execute(
            "UPDATE chunks SET reinforcement = ?, access_count = ?, accessed_at = ?, strength = ?, created_at = ?"
            " WHERE uri = ? AND content_hash = ?",
            (r["reinforcement"], r["access_count"], r["accessed_at"], r["strength"], r["created_at"], r["uri"],
             r["content_hash"])).getconnection().changes()
    return n


# ---- searches --------------------------------------------------------------------------

def _filter_sql(parent_dirs=None, under=None, since=None, until=None) -> tuple[str, list]:
    clauses, params = [], []
    if parent_dirs:
        clauses.append("c.parent_dir IN (" + ", ".join("?" for _ in parent_dirs) + ")")
        params.extend(parent_dirs)
    if under:
        ors = []
        for prefix in under:
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            ors.append("c.uri LIKE ? ESCAPE '\\'")
            params.append(escaped + "%")
        clauses.append("(" + " OR ".join(ors) + ")")
    if since:  # a memory's own day (ISO text compares in time order)
        clauses.append("c.memory_date >= ?")
        params.append(since)
    if until:  # exclusive: the day after the last day asked for
        clauses.append("c.memory_date < ?")
        params.append(until)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


def _space_bounds(space: str) -> tuple[str, str]:
    """The uri range of a space: from `spaces/NAME/` up to the first string past it ("" = all of spaces/).

    Ranges rather than LIKE: they use the uri index and need no escaping of names.
    """
    prefix = space_prefix(space) if space else FOLDER + "/"
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _with_space(where: str, params: list, space: str | None) -> tuple[str, list]:
    """Add a space filter: None none, "" the default space (outside spaces/), NAME that space only."""
    if space is None:
        return where, params
    low, high = _space_bounds(space)
    if space:
        return where + " AND c.uri >= ? AND c.uri < ?", [*params, low, high]
    return where + " AND (c.uri < ? OR c.uri >= ?)", [*params, low, high]


def has_spaces(con) -> bool:
    """Whether any note of this store lives in a named space (else the default space is every row)."""
    return bool(db.rows(con, "SELECT 1 FROM chunks WHERE uri >= ? AND uri < ? LIMIT 1", _space_bounds("")))


def fts_search(con, match: str, k: int, parent_dirs=None, under=None, space=None, since=None,
               until=None) -> list[dict]:
    """BM25 candidates (bigger `bm25` is better here: the sign of FTS5's rank is flipped)."""
    if not match:
        return []
    where, params = _filter_sql(parent_dirs, under, since, until)
    where, params = _with_space(where, params, space)
    sql = (_SELECT + ", -bm25(chunks_fts, 1.0, 0.3, 0.6) AS bm25 FROM chunks_fts"
           " JOIN chunks c ON c.fts_rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?" + where +
           " ORDER BY bm25(chunks_fts, 1.0, 0.3, 0.6) LIMIT ?")
    return db.rows(con, sql, [match, *params, k])


def term_doc_counts(con, terms: list[str]) -> dict[str, int]:
    """How many chunks hold each indexed term (FTS5 vocabulary, made per connection in temp)."""
    if not terms:
        return {}
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_terms USING fts5vocab(main, chunks_fts, 'row')")
    out = {}
    for i in range(0, len(terms), 500):  # under SQLite's bound-value limit
        part = terms[i:i + 500]
        sql = f"SELECT term, doc FROM temp.chunks_fts_terms WHERE term IN ({','.join('?' * len(part))})"
        out.update((r["term"], r["doc"]) for r in db.rows(con, sql, part))
    return out


def chunk_count(con) -> int:
    return db.rows(con, "SELECT count(*) AS n FROM chunks")[0]["n"]


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
    where, params = _with_space(where, params, space)
    if where:
        sql = (_SELECT + ", 1.0 - vec_distance_cosine(v.embedding, ?) AS similarity FROM chunks c"
               " JOIN chunks_vec v ON v.id = c.id WHERE 1" + where + " ORDER BY similarity DESC LIMIT ?")
        return db.rows(con, sql, [blob, *params, k])
    sql = ("WITH knn AS (SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) " +
           _SELECT + ", 1.0 - knn.distance AS similarity FROM knn JOIN chunks c ON c.id = knn.id"
           " ORDER BY knn.distance")
    return db.rows(con, sql, [blob, k])


KNN_MAX = 4096  # the largest k sqlite-vec answers


def _knn_in_space(con, blob, k: int, space: str) -> list[dict] | None:
    """A space's nearest rows from KNN over the whole table, asking for more until k of them come back.

    Joining the vector table row by row costs about 0.1 ms a row, so an exact scan of a big space
    takes seconds; KNN scans every vector in C in milliseconds. None when the space is so small a
    share of the store that KNN_MAX neighbours might not reach it: then its few rows are scanned.
    """
    where, params = _with_space("", [], space)
    inside = db.rows(con, "SELECT count(*) AS n FROM chunks c WHERE 1" + where, params)[0]["n"]
    total = chunk_count(con)
    if inside == 0:
        return []
    want = min(total, max(2 * k, -(-2 * k * total // inside)))  # twice the share a space of this size should need
    while want <= KNN_MAX:
        found = db.rows(con, "WITH knn AS (SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) "
                        + _SELECT + ", 1.0 - knn.distance AS similarity FROM knn JOIN chunks c ON c.id = knn.id"
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
        out += db.rows(con, _SELECT + " FROM chunks c WHERE c.id IN (" + ", ".join("?" for _ in part) + ")", part)
    return out


# ---- counters and stats ------------------------------------------------------------------

def increment_reinforcement(con, ids: list[str], amount: float = 1.0) -> None:
    now = time.time()
    for i in ids:
        con.execute("UPDATE chunks SET reinforcement = reinforcement + ?, updated_at = ? WHERE id = ?", (amount, now, i))


def increment_access_count(con, ids: list[str]) -> None:
    now = time.time()
    for i in ids:
        con.execute("UPDATE chunks SET access_count = access_count + 1, accessed_at = ?, updated_at = ? WHERE id = ?",
                    (now, now, i))


def carry_counters(con, chunk_id: str, old: dict) -> int:
    """An edited memory keeps what it had earned: reinforcement, accesses, strength and age."""
    return con.execute("UPDATE chunks SET reinforcement = ?, access_count = ?, accessed_at = ?, strength = ?,"
                       " created_at = ? WHERE id = ?",
                       (old["reinforcement"], old["access_count"], old["accessed_at"], old["strength"],
                        old["created_at"], chunk_id)).getconnection().changes()


def newest_chunks(con, k: int, space: str | None = None) -> list[dict]:
    """The newest memories by their own date (then by when first indexed), optionally of one space."""
    where, params = _with_space("", [], space)
    return db.rows(con, _SELECT + " FROM chunks c WHERE c.kind = 'memory'" + where + " ORDER BY c.memory_date DESC,"
                   " c.created_at DESC, c.uri DESC, c.start_line DESC LIMIT ?", [*params, int(k)])


def get_stats(con) -> dict:
    total = db.rows(con, "SELECT count(*) AS chunks, count(DISTINCT uri) AS files, coalesce(sum(token_count), 0) AS tokens,"
                         " coalesce(sum(access_count), 0) AS accesses, coalesce(sum(reinforcement), 0) AS reinforcement"
                         " FROM chunks")[0]
    by_type = {r["type"]: r["n"] for r in db.rows(con, "SELECT type, count(*) AS n FROM chunks GROUP BY type ORDER BY type")}
    by_kind = {"memory": 0, "section": 0}
    by_kind.update((r["kind"], r["n"]) for r in db.rows(con, "SELECT kind, count(*) AS n FROM chunks GROUP BY kind"))
    docs = db.rows(con, "SELECT count(*) AS n, max(indexed_at) AS last FROM documents")[0]
    vectors = db.rows(con, "SELECT count(*) AS n FROM chunks_vec")[0]["n"] if has_vec_table(con) else 0
    return {**total, "documents": docs["n"], "last_indexed_at": docs["last"], "vectors": vectors, "by_type": by_type,
            "memories": by_kind["memory"], "sections": by_kind["section"]}


# ---- dynamics and cleanup ------------------------------------------------------------------

def dynamics_inputs(con) -> list[dict]:
    """What the decay pass needs of every chunk."""
    return db.rows(con, "SELECT id, created_at, accessed_at, importance, reinforcement, access_count, evergreen,"
                        " strength, kind, memory_date FROM chunks")


def set_strengths(con, changes: list[tuple[float, str]]) -> int:
    """changes: (strength, chunk id) pairs; call inside a transaction."""
    for value, chunk_id in changes:
        con.execute("UPDATE chunks SET strength = ? WHERE id = ?", (value, chunk_id))
    return len(changes)


def set_chunk_times(con, uri: str, created_at: float, accessed_at: float | None) -> int:
    """Move a note's chunks back in time (tests and benchmarks simulate old memories with it)."""
    return con.execute("UPDATE chunks SET created_at = ?, accessed_at = ? WHERE uri = ?",
                       (created_at, accessed_at, uri)).getconnection().changes()


def chunk_strengths(con, uri: str) -> list[float]:
    return [r["strength"] for r in db.rows(con, "SELECT strength FROM chunks WHERE uri = ? ORDER BY start_line", (uri,))]


def document_uris(con) -> list[str]:
    return [r["uri"] for r in db.rows(con, "SELECT uri FROM documents ORDER BY uri")]


def uris_without_document(con) -> list[str]:
    """Chunk rows whose file has no document row (left by an interrupted write or an old bug)."""
    return [r["uri"] for r in db.rows(con, "SELECT DISTINCT c.uri AS uri FROM chunks c"
                                           " LEFT JOIN documents d ON d.uri = c.uri WHERE d.uri IS NULL")]


def delete_orphan_vectors(con) -> int:
    """Vectors whose chunk is gone (including any left by a previous embedder's rows)."""
    if not has_vec_table(con):
        return 0
    orphans = [r["id"] for r in db.rows(con, "SELECT v.id AS id FROM chunks_vec v LEFT JOIN chunks c ON c.id = v.id"
                                             " WHERE c.id IS NULL")]
    for chunk_id in orphans:
        con.execute("DELETE FROM chunks_vec WHERE id = ?", (chunk_id,))
    return len(orphans)


def fts_optimize(con) -> None:
    con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")


def vec_version(con) -> str:
    return con.execute("SELECT vec_version()").fetchall()[0][0]


def wal_checkpoint(con) -> dict:
    """Fold the WAL into the main file and truncate it (outside any transaction)."""
    busy, log, done = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
    return {"busy": busy, "wal_pages": log, "checkpointed": done}


# ---- verification ----

def chunk_uris(con) -> set[str]:
    return {r["uri"] for r in db.rows(con, "SELECT DISTINCT uri FROM chunks")}


def vec_table_dimension(con) -> int | None:
    """The dimension declared by the vector table's schema, or None without one."""
    found = db.rows(con, "SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'")
    if not found:
        return None
    match = re.search(r"float\[(\d+)\]", found[0]["sql"] or "")
    return int(match.group(1)) if match else None


def orphan_vector_ids(con) -> list[str]:
    if not has_vec_table(con):
        return []
    have = {r["id"] for r in db.rows(con, "SELECT id FROM chunks")}
    return sorted(r["id"] for r in db.rows(con, "SELECT id FROM chunks_vec") if r["id"] not in have)


def chunks_without_vector(con) -> list[dict]:
    if not has_vec_table(con):
        return []
    have = {r["id"] for r in db.rows(con, "SELECT id FROM chunks_vec")}
    return [r for r in db.rows(con, "SELECT id, uri FROM chunks ORDER BY uri, start_line") if r["id"] not in have]


def vectors_of_wrong_length(con, dim: int) -> list[str]:
    if not has_vec_table(con):
        return []
    return [r["id"] for r in db.rows(con, "SELECT id FROM chunks_vec WHERE vec_length(embedding) != ?", (int(dim),))]


def chunks_missing_fts(con) -> list[dict]:
    """Chunks with no FTS document (the docsize shadow table holds one row per indexed rowid)."""
    return db.rows(con, "SELECT c.id, c.uri FROM chunks c LEFT JOIN chunks_fts_docsize d ON d.id = c.fts_rowid"
                        " WHERE d.id IS NULL ORDER BY c.uri, c.start_line")


def fts_orphan_rowids(con) -> list[int]:
    return [r["id"] for r in db.rows(con, "SELECT d.id FROM chunks_fts_docsize d LEFT JOIN chunks c"
                                          " ON c.fts_rowid = d.id WHERE c.id IS NULL ORDER BY d.id")]


def fts_integrity_problem(con) -> str | None:
    """FTS5's own check of its index against the chunks table (rank 1: content compared too)."""
    try:
        con.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)")
    except (StoreBusyError, DiskFullError, ReadOnlyStoreError):
        raise  # the check could not run: that says nothing about the index
    except StoreError as exc:
        return str(exc)
    return None


def rebuild_fts(con) -> None:
    """Re-derive the whole FTS index from the chunks table (drops orphans, restores missing rows)."""
    con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")


def delete_vectors(con, ids: list[str]) -> None:
    for i in ids:
        con.execute("DELETE FROM chunks_vec WHERE id = ?", (i,))


def delete_document(con, uri: str) -> None:
    con.execute("DELETE FROM documents WHERE uri = ?", (uri,))


def delete_chunk_rows(con, uri: str) -> int:
    """Drop a file's chunk rows and vectors without touching FTS (for rows FTS no longer matches;
    rebuild_fts must follow)."""
    ids = [r["id"] for r in db.rows(con, "SELECT id FROM chunks WHERE uri = ?", (uri,))]
    if has_vec_table(con):
        delete_vectors(con, ids)
    con.execute("DELETE FROM chunks WHERE uri = ?", (uri,))
    return len(ids)


# ---- the in-memory vector matrix's view of sqlite-vec ---------------------------------------
# vec0 keeps id -> rowid in its shadow table chunks_vec_rowids; rowids are AUTOINCREMENT, so a
# row written after another always has a larger one, and (largest rowid, count) changes with any write.

def vector_signature(con) -> tuple:
    """What changes with any write of vectors: (largest rowid ever given, count, (rowid, id) of the first and
    of the last row). The two ends tell a file swapped in by rebuild from the same file written further."""
    if not has_vec_table(con):
        return 0, 0, None, None
    top = db.rows(con, "SELECT seq FROM sqlite_sequence WHERE name = 'chunks_vec_rowids'")
    n = db.rows(con, "SELECT count(*) AS n FROM chunks_vec_rowids")[0]["n"]
    first = con.execute("SELECT rowid, id FROM chunks_vec_rowids ORDER BY rowid LIMIT 1").fetchall()
    last = con.execute("SELECT rowid, id FROM chunks_vec_rowids ORDER BY rowid DESC LIMIT 1").fetchall()
    return (top[0]["seq"] if top else 0), n, (tuple(first[0]) if first else None), (tuple(last[0]) if last else None)


def vectors_after(con, rowid: int):
    """(rowid, id, vector) of every vector written after `rowid`, oldest first, streamed."""
    listed = list(con.execute("SELECT rowid, id FROM chunks_vec_rowids WHERE rowid > ? ORDER BY rowid", (rowid,)))
    found = vectors_for_ids(con, [cid for _rid, cid in listed])
    for rid, cid in listed:
        if cid in found:
            yield rid, cid, found[cid]


def all_vectors_with_rowid(con):
    """(rowid, id, vector) of every vector, streamed in storage order, for a full load."""
    for rid, cid, blob in con.execute("SELECT r.rowid, v.id, v.embedding FROM chunks_vec v JOIN chunks_vec_rowids r ON r.id = v.id"):
        yield rid, cid, db.blob_vector(blob)


def vector_rowids(con) -> list[int]:
    return [r[0] for r in con.execute("SELECT rowid FROM chunks_vec_rowids")]


def vectors_for_ids(con, ids: list[str]) -> dict[str, np.ndarray]:
    """Exact vectors of a few ids (missing ones are left out: removed since they were listed)."""
    if not ids or not has_vec_table(con):
        return {}
    out = {}
    for cid in ids:
        for (blob,) in con.execute("SELECT embedding FROM chunks_vec WHERE id = ?", (cid,)):
            out[cid] = db.blob_vector(blob)
    return out
