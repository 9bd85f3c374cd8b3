"""Counters, stats and the passes' statements: access and reinforcement, strength, cleanup, WAL."""

from __future__ import annotations

import time

from indexer.index import db
from indexer.index.sql.queries import search_filters, space_bounds
from indexer.index.sql.records import skipped_notes
from indexer.index.sql.removals import delete_vector
from indexer.index.sql.checks import vector_signature
from indexer.index.sql.ranking_vectors import e5_progress, has_e5_table
from indexer.index.sql.schema import SELECT_CHUNKS, has_vec_table, vectors_pending
from indexer.index.sql.text_stats import chunk_count, text_memo as text_stats_memo


# ---- counters and stats ------------------------------------------------------------------

def increment_reinforcement(con, ids: list[str], amount: float = 1.0) -> None:
    now = time.time()
    for i in ids:  # a negative amount takes restatements back (an undone reinforcement), never below none
        con.execute("UPDATE chunks SET reinforcement = max(0, reinforcement + ?), updated_at = ? WHERE id = ?",
                    (amount, now, i))


def increment_access_count(con, ids: list[str]) -> None:
    now = time.time()
    for i in ids:  # a read: accessed_at moves, updated_at stays the memory's last change
        con.execute("UPDATE chunks SET access_count = access_count + 1, accessed_at = ? WHERE id = ?", (now, i))


def carry_counters(con, chunk_id: str, old: dict) -> int:
    """An edited memory keeps what it had earned: reinforcement, accesses, strength and age."""
    return con.execute("UPDATE chunks SET reinforcement = ?, access_count = ?, accessed_at = ?, strength = ?,"
                       " created_at = ? WHERE id = ?",
                       (old["reinforcement"], old["access_count"], old["accessed_at"], old["strength"],
                        old["created_at"], chunk_id)).getconnection().changes()


def newest_chunks(con, k: int, space: str | None = None, since: str | None = None,
                  until: str | None = None, type: str | None = None, note: str | None = None) -> list[dict]:
    """The newest memories by their own date (then by when first indexed), optionally of one space and those
    dated in [since, until) (ISO days; a date with a time sorts inside its day), of one type, in the notes whose
    path holds `note`: filtered before the LIMIT, so an old memory of a rare type is still found."""
    where, params = search_filters(None, space, since, until)
    if type is not None:
        where, params = where + " AND c.type = ?", [*params, type]
    if note is not None:
        where, params = where + " AND instr(c.uri, ?) > 0", [*params, note]
    return db.rows(con, SELECT_CHUNKS + " FROM chunks c WHERE c.kind = 'memory'" + where + " ORDER BY c.memory_date DESC,"
                   " c.created_at DESC, c.uri DESC, c.start_line DESC LIMIT ?", [*params, int(k)])



def memories_by_space(con) -> list[dict]:
    """Per named space: how many memories it holds and when the first was indexed and the last changed."""
    low, high = space_bounds("")
    return db.rows(con, "SELECT substr(uri, ?, instr(substr(uri, ?), '/') - 1) AS space, count(*) AS memories,"
                        " min(created_at) AS created_at, max(updated_at) AS updated_at FROM chunks"
                        " WHERE kind = 'memory' AND uri >= ? AND uri < ? GROUP BY space ORDER BY space",
                   [len(low) + 1, len(low) + 1, low, high])

def get_stats(con) -> dict:
    total = db.rows(con, "SELECT count(*) AS chunks, count(DISTINCT uri) AS files, coalesce(sum(token_count), 0) AS tokens,"
                         " coalesce(sum(access_count), 0) AS accesses, coalesce(sum(reinforcement), 0) AS reinforcement"
                         " FROM chunks")[0]
    by_type = {r["type"]: r["n"] for r in db.rows(con, "SELECT type, count(*) AS n FROM chunks GROUP BY type ORDER BY type")}
    by_kind = {"memory": 0, "section": 0}
    by_kind.update((r["kind"], r["n"]) for r in db.rows(con, "SELECT kind, count(*) AS n FROM chunks GROUP BY kind"))
    docs = db.rows(con, "SELECT count(*) AS n, max(indexed_at) AS last FROM documents")[0]
    vectors = db.rows(con, "SELECT count(*) AS n FROM chunks_vec")[0]["n"] if has_vec_table(con) else 0
    e5_done, e5_texts = e5_progress(con)
    return {**total, "documents": docs["n"], "last_indexed_at": docs["last"], "vectors": vectors, "by_type": by_type,
            "memories": by_kind["memory"], "sections": by_kind["section"], "skipped": len(skipped_notes(con)),
            "e5_vectors": e5_done, "e5_texts": e5_texts, "vectors_pending": vectors_pending(con)}


def status_counts(con) -> dict:
    """What `status` shows of a store, read without a pass over every chunk (get_stats sums over all of them:
    1.8 s at 1M chunks, and a daemon's start is watched by polling status). The ranking model's count is its
    table's rows, which may run ahead of the texts still held until the cleanup pass drops the others."""
    n_docs, last = con.execute("SELECT count(*), max(indexed_at) FROM documents").fetchall()[0]
    known = text_stats_memo(con)
    if "texts" not in known:  # a distinct count of the content index: 140 ms at 1M, kept until the text changes
        known["texts"] = con.execute("SELECT count(DISTINCT content_hash) FROM chunks").fetchall()[0][0]
    e5 = con.execute("SELECT count(*) FROM chunks_e5").fetchall()[0][0] if has_e5_table(con) else 0
    return {"documents": n_docs, "last_indexed_at": last, "chunks": con.execute("SELECT count(*) FROM chunks").fetchall()[0][0],
            "vectors": vector_signature(con)[1], "e5_vectors": min(e5, known["texts"]), "e5_texts": known["texts"],
            "skipped": len(skipped_notes(con)), "vectors_pending": vectors_pending(con)}


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
        delete_vector(con, chunk_id)
    return len(orphans)


def fts_optimize(con) -> None:
    con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")


BULK_CHUNKS = 2000  # a write of at least this many chunks, and a quarter of the store, is a bulk write


def fts_optimize_after_bulk(con, written: int) -> bool:
    """After writing `written` chunks to a store: merge the full-text index into one segment when that
    was a bulk write (a first build, an import). Each committed batch leaves FTS5 a segment it
    merges only level by level, and a search seeks every segment for every word: at 96k chunks 17
    segments make a query about 10% slower than one. Merging costs about 13 us a chunk of the
    store; the daily cleanup merges what smaller writes leave."""
    # the store is counted only for a write that could be bulk: a routine sync pays nothing
    if written < BULK_CHUNKS or 4 * written < chunk_count(con):
        return False
    with db.transaction(con):
        fts_optimize(con)
    return True


def vec_version(con) -> str:
    return con.execute("SELECT vec_version()").fetchall()[0][0]


def wal_checkpoint(con) -> dict:
    """Fold the WAL into the main file and truncate it (outside any transaction)."""
    busy, log, done = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
    return {"busy": busy, "wal_pages": log, "checkpointed": done}
