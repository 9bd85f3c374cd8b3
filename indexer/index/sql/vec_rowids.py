"""Vectors addressed by vec0's rowid (never reused): what an index kept beside the file needs to follow it."""

from __future__ import annotations

from indexer.index.sql.schema import has_vec_table

_IN = 500  # ids per IN (...) list: well under SQLite's bound on variables


def ids_for_rowids(con, rowids: list[int]) -> dict[int, str]:
    """The chunk id of each rowid still stored (removed ones are left out)."""
    out: dict[int, str] = {}
    for i in range(0, len(rowids), _IN):
        part = rowids[i:i + _IN]
        marks = ",".join("?" * len(part))
        out.update(con.execute(f"SELECT rowid, id FROM chunks_vec_rowids WHERE rowid IN ({marks})", part).fetchall())
    return out


def rowids_for_ids(con, ids: list[str]) -> dict[str, int]:
    """The vec0 rowid of each chunk id that has a vector."""
    if not ids or not has_vec_table(con):
        return {}
    out: dict[str, int] = {}
    for i in range(0, len(ids), _IN):
        part = ids[i:i + _IN]
        marks = ",".join("?" * len(part))
        out.update((cid, rid) for rid, cid in con.execute(
            f"SELECT rowid, id FROM chunks_vec_rowids WHERE id IN ({marks})", part).fetchall())
    return out


def vector_count_between(con, lo: int, hi: int) -> int:
    """Vectors whose rowid lies in [lo, hi]: a range count on the rowid key, no vector read."""
    return con.execute("SELECT count(*) FROM chunks_vec_rowids WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchall()[0][0]


def vector_rowids_between(con, lo: int, hi: int) -> list[int]:
    return [r[0] for r in con.execute("SELECT rowid FROM chunks_vec_rowids WHERE rowid BETWEEN ? AND ?", (lo, hi))]

