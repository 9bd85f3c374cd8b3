"""Writes and reads of documents and records: upsert pieces, vectors by hash, counters kept across rebuilds."""

from __future__ import annotations

import json
import time

import numpy as np

from indexer.index import db
from indexer.index.sql.removals import delete_vector, log_removal
from indexer.index.sql.queries import chunks_by_ids
from indexer.index.sql.schema import SELECT_CHUNKS, has_vec_table


# ---- documents -----------------------------------------------------------------------

def get_document(con, uri: str) -> dict | None:
    found = db.rows(con, "SELECT uri, size, mtime_ns, sha256, indexed_at FROM documents WHERE uri = ?", (uri,))
    return found[0] if found else None


def all_documents(con) -> dict[str, dict]:
    return {r["uri"]: r for r in db.rows(con, "SELECT uri, size, mtime_ns, sha256, indexed_at FROM documents")}


def put_document(con, uri: str, size: int, mtime_ns: int, sha256: str) -> None:
    con.execute("INSERT OR REPLACE INTO documents(uri, size, mtime_ns, sha256, indexed_at) VALUES(?, ?, ?, ?, ?)",
                (uri, size, mtime_ns, sha256, time.time()))


SKIPPED_KEY = "skipped_notes"  # meta: {uri: [size, mtime_ns, reason]} of notes left out at the last look


def skipped_notes(con) -> dict[str, list]:
    """The notes the last sync could not index, with the stat it saw and why (a note fixed or changed
    since is read again)."""
    found = db.rows(con, "SELECT value FROM meta WHERE key = ?", (SKIPPED_KEY,))
    return json.loads(found[0]["value"]) if found else {}


def put_skipped_notes(con, notes: dict[str, list]) -> None:
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
                (SKIPPED_KEY, json.dumps(notes, ensure_ascii=False, sort_keys=True)))


# ---- chunks: writes --------------------------------------------------------------------

def chunks_for_uri(con, uri: str) -> list[dict]:
    return db.rows(con, SELECT_CHUNKS + ", c.fts_rowid FROM chunks c WHERE c.uri = ? ORDER BY c.start_line", (uri,))


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
    log_removal(con, row["fts_rowid"])
    con.execute("DELETE FROM chunks WHERE id = ?", (row["id"],))
    if with_vec:
        delete_vector(con, row["id"])


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
    # vec0 has no UPSERT, and its DELETE of an id it lacks took 67 us against the INSERT's 12 (a
    # rebuild of 6,162 chunks): delete_vector looks in its id map (the shadow table checks.py reads too) first
    delete_vector(con, chunk_id)
    con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (chunk_id, db.vector_blob(vec)))


def move_chunk(con, old_id: str, new_id: str, start_line: int, end_line: int, with_vec: bool) -> None:
    """Unchanged text whose lines moved: new id and lines; counters, FTS row and vector stay."""
    con.execute("UPDATE chunks SET id = ?, start_line = ?, end_line = ?, updated_at = ? WHERE id = ?",
                (new_id, start_line, end_line, time.time(), old_id))
    if with_vec:
        vec = vector_for_id(con, old_id)
        delete_vector(con, old_id)
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
    # runs on every sync: an anti-join on vec0's id map in SQLite (reading both id lists into Python took 0.17 s
    # at 100k chunks, 2 s at 1M), then the text of just the chunks that lack a vector
    missing = [r for (r,) in con.execute("SELECT c.id FROM chunks c WHERE NOT EXISTS"
                                         " (SELECT 1 FROM chunks_vec_rowids v WHERE v.id = c.id)")]
    out = {}
    for r in chunks_by_ids(con, missing):
        out.setdefault(r["content_hash"], r)
    return out


def fill_vectors(con, vectors: dict[str, np.ndarray]) -> int:
    """Give each chunk without a vector whose text is in vectors its vector; by the text's index, so a batch of
    waiting texts costs its own rows, not a pass over every chunk and vector id of the store."""
    n = 0
    for h, vec in vectors.items():
        for (cid,) in con.execute("SELECT c.id FROM chunks c WHERE c.content_hash = ? AND NOT EXISTS"
                                  " (SELECT 1 FROM chunks_vec_rowids v WHERE v.id = c.id)", (h,)).fetchall():
            put_vector(con, cid, vec)
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
