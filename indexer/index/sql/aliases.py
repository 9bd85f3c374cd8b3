"""Ids a memory had before an edit: an id an agent was given keeps finding the memory it named."""

from __future__ import annotations

import time

from indexer.index import db

MAX_HOPS = 32  # chains are kept one hop long (add_alias); the bound only stops a damaged table's loop


def has_aliases(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'aliases'"))


def add_alias(con, old_id: str, new_id: str) -> None:
    """old_id now names new_id (call inside a transaction); an id that comes back stops being an alias."""
    if old_id == new_id:
        return
    now = time.time()
    con.execute("DELETE FROM aliases WHERE old_id = ?", (new_id,))
    # ids that named old_id now name new_id: a chain stays one hop however often a memory moves
    con.execute("UPDATE aliases SET new_id = ?, at = ? WHERE new_id = ?", (new_id, now, old_id))
    con.execute("INSERT OR REPLACE INTO aliases(old_id, new_id, at) VALUES(?, ?, ?)", (old_id, new_id, now))


def resolve_alias(con, record_id: str) -> str | None:
    """The id the memory once called record_id has now, or None (never an alias, or the memory is gone)."""
    if not has_aliases(con):
        return None  # an index from before aliases, opened read-only
    seen, current = {record_id}, record_id
    for _ in range(MAX_HOPS):
        found = db.rows(con, "SELECT new_id FROM aliases WHERE old_id = ?", (current,))
        if not found or found[0]["new_id"] in seen:
            break
        current = found[0]["new_id"]
        seen.add(current)
        if db.rows(con, "SELECT 1 AS x FROM chunks WHERE id = ?", (current,)):
            return current
    return None


def all_aliases(con) -> list[tuple[str, str, float]]:
    if not has_aliases(con):
        return []
    return [(r["old_id"], r["new_id"], r["at"]) for r in db.rows(con, "SELECT old_id, new_id, at FROM aliases")]


def restore_aliases(con, aliases: list[tuple[str, str, float]]) -> None:
    """A rebuild keeps the aliases: unchanged text gets its old ids back, so they still resolve."""
    con.executemany("INSERT OR REPLACE INTO aliases(old_id, new_id, at) VALUES(?, ?, ?)", aliases)


def prune_aliases(con) -> int:
    """Drop aliases whose chain ends at no memory (it was forgotten or its note deleted)."""
    dead = [old for old, _new, _at in all_aliases(con) if resolve_alias(con, old) is None]
    for old in dead:
        con.execute("DELETE FROM aliases WHERE old_id = ?", (old,))
    return len(dead)
