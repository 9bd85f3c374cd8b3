"""Removals logged for the copies a serving process keeps beside an index (kept words, IVF lists): they
follow the store by reading what was removed since they last looked, instead of comparing every row."""

from __future__ import annotations

REMOVED_KEPT = 500_000  # removals logged of each kind (about 20 bytes each); a copy older than that is made again
_LOGS = {"fts": ("fts_removed", "fts_rowid"), "vec": ("vec_removed", "vec_rowid")}


def log_removal(con, fts_rowid: int) -> None:
    """A chunk's full-text row is gone (the one function that removes one calls this)."""
    con.execute("INSERT INTO fts_removed(fts_rowid) VALUES(?)", (fts_rowid,))


def delete_vector(con, chunk_id: str) -> bool:
    """Remove a chunk's vector and log its vec0 rowid; False when it had none. Every vector removal goes here."""
    found = con.execute("SELECT rowid FROM chunks_vec_rowids WHERE id = ?", (chunk_id,)).fetchall()
    if not found:
        return False
    con.execute("DELETE FROM chunks_vec WHERE id = ?", (chunk_id,))
    if _has_log(con, "vec_removed"):
        con.execute("INSERT INTO vec_removed(vec_rowid) VALUES(?)", (found[0][0],))
    return True


def _has_log(con, table: str) -> bool:
    # a file no writer of this version has opened yet has no log: nothing was removed since it was read
    return bool(con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall())


def removal_seq(con, kind: str = "fts", unlogged=0):
    """The newest removal's number (0: none logged); kind "fts" or "vec"; `unlogged` for a file that keeps no
    log (no writer of this version has opened it: removals go unnumbered)."""
    table, _col = _LOGS[kind]
    if not _has_log(con, table):
        return unlogged
    return con.execute(f"SELECT coalesce(max(seq), 0) FROM {table}").fetchall()[0][0]


def removals_since(con, seq: int, upto: int | None = None, kind: str = "fts") -> tuple[list[int], bool]:
    """(rowids removed after removal number seq (up to upto), whether the log still reaches back to seq)."""
    table, col = _LOGS[kind]
    if not _has_log(con, table):
        return [], True
    oldest = con.execute(f"SELECT min(seq) FROM {table}").fetchall()[0][0]
    whole = oldest is None or oldest <= seq + 1
    found = con.execute(f"SELECT {col} FROM {table} WHERE seq > ? AND seq <= ? ORDER BY seq",
                        (seq, upto if upto is not None else 2 ** 62))
    return [r for (r,) in found], whole


def trim_removals(con, keep: int = REMOVED_KEPT) -> int:
    """Drop all but the newest `keep` removals of each log (the cleanup pass)."""
    dropped = 0
    for table, _col in _LOGS.values():
        if _has_log(con, table):
            con.execute(f"DELETE FROM {table} WHERE seq <= (SELECT max(seq) FROM {table}) - ?", (keep,))
            dropped += con.changes()
    return dropped
