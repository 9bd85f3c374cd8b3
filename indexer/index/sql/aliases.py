"""Ids a memory had before an edit: an id an agent was given keeps finding the memory it named."""

from __future__ import annotations

import time

from indexer.index import db
from indexer.index.sql.schema import SELECT_CHUNKS


def has_aliases(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'aliases'"))


def add_alias(con, old_id: str, new_id: str) -> None:
    """old_id now names new_id (call inside a transaction); an id that comes back stops being an alias."""
    if old_id == new_id:
        return
    now = time.time()
    con.execute("DELETE FROM aliases WHERE old_id = ?", (new_id,))
    # ids that named old_id now name new_id: every alias is one hop, however often a memory moves
    con.execute("UPDATE aliases SET new_id = ?, at = ? WHERE new_id = ?", (new_id, now, old_id))
    con.execute("INSERT OR REPLACE INTO aliases(old_id, new_id, at) VALUES(?, ?, ?)", (old_id, new_id, now))


def resolve_alias(con, record_id: str) -> str | None:
    """The id the memory once called record_id has now, or None (never an alias, or the memory is gone)."""
    if not has_aliases(con):
        return None  # an index from before aliases, opened read-only
    found = db.rows(con, "SELECT a.new_id FROM aliases a JOIN chunks c ON c.id = a.new_id WHERE a.old_id = ?",
                    (record_id,))
    return found[0]["new_id"] if found else None


def all_aliases(con) -> list[tuple[str, str, float]]:
    if not has_aliases(con):
        return []
    return [(r["old_id"], r["new_id"], r["at"]) for r in db.rows(con, "SELECT old_id, new_id, at FROM aliases")]


def restore_aliases(con, aliases: list[tuple[str, str, float]]) -> None:
    """A rebuild keeps the aliases: unchanged text gets its old ids back, so they still resolve."""
    con.executemany("INSERT OR REPLACE INTO aliases(old_id, new_id, at) VALUES(?, ?, ?)", aliases)


def prune_aliases(con) -> int:
    """Drop aliases naming no memory any more (it was forgotten or its note deleted)."""
    if not has_aliases(con):
        return 0
    return con.execute("DELETE FROM aliases WHERE new_id NOT IN (SELECT id FROM chunks)").getconnection().changes()


def ids_naming(con, record_id: str) -> list[str]:
    """The ids a memory had before its edits (oldest first), all of which still find it."""
    if not has_aliases(con):
        return []
    return [r["old_id"] for r in db.rows(con, "SELECT old_id FROM aliases WHERE new_id = ? ORDER BY at, old_id",
                                         (record_id,))]


def memories_mentioning(con, needle: str, limit: int = 20) -> list[dict]:
    """Memory records whose text holds needle (an id in a superseded line: which memory replaced which)."""
    return db.rows(con, SELECT_CHUNKS + " FROM chunks c WHERE c.kind = 'memory' AND instr(c.content, ?) > 0"
                   " ORDER BY c.memory_date, c.start_line LIMIT ?", (needle, int(limit)))
