"""What `verify` reads, and the in-memory vector copy's view of sqlite-vec."""

from __future__ import annotations

import re

import numpy as np

from indexer.index import db
from indexer.errors import DiskFullError, ReadOnlyStoreError, StoreBusyError, StoreError
from indexer.index.sql.schema import has_vec_table
from indexer.index.sql.removals import delete_vector, removal_seq


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
        delete_vector(con, i)


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
# vec0 stores vectors 256 (1,024 before) to a chunk, with a bit per slot that says it holds a live one: counting
# those bits reads a few hundred small rows at 100k vectors, where count(*) reads every rowid.

def vector_signature(con) -> tuple:
    """What changes with any write of vectors: (largest rowid ever given, count, (rowid, id) of the first and
    of the last row). The two ends tell a file swapped in by rebuild from the same file written further."""
    if not has_vec_table(con):
        return 0, 0, None, None
    top = db.rows(con, "SELECT seq FROM sqlite_sequence WHERE name = 'chunks_vec_rowids'")
    n = _vector_count(con, top[0]["seq"] if top else 0)
    first = con.execute("SELECT rowid, id FROM chunks_vec_rowids ORDER BY rowid LIMIT 1").fetchall()
    last = con.execute("SELECT rowid, id FROM chunks_vec_rowids ORDER BY rowid DESC LIMIT 1").fetchall()
    return (top[0]["seq"] if top else 0), n, (tuple(first[0]) if first else None), (tuple(last[0]) if last else None)


def _vector_count(con, top: int) -> int:
    """Live vectors. Every insert takes the next rowid and every removal the next log number, so with the log
    kept the count is the same while both are: counting the slots again took 0.49 ms at 1M vectors, twice a
    question that names a time (the kept copies look for writes before each search)."""
    seq = removal_seq(con, "vec", unlogged=None)
    known = db.memo(con, (top, seq), "vectors") if seq is not None else {}
    if "count" not in known:
        known["count"] = sum(int.from_bytes(bits, "little").bit_count()
                             for (bits,) in con.execute("SELECT validity FROM chunks_vec_chunks"))
    return known["count"]


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
