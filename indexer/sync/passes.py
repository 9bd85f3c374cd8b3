"""The scheduled passes over one store: decay (chunk strength) and cleanup (index hygiene)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from indexer.index import db
from indexer.index import sql
from indexer.config import Config
from indexer.notes import decision_log, trash
from indexer.sync.dynamics import strength
from indexer.index.stores import Store

CHANGE_EPSILON = 1e-4  # strengths closer than this are not rewritten: keeps the pass's transaction small


def decay_store(st: Store, cfg: Config, now: float | None = None) -> dict:
    """Recompute every chunk's strength; evergreen chunks stay at 1. Returns counts."""
    t0 = time.perf_counter()
    now = time.time() if now is None else now
    rows = sql.dynamics_inputs(st.con)
    changes = []
    for r in rows:
        value = strength(now, born(r), r["accessed_at"], r["importance"], r["reinforcement"],
                         r["access_count"], bool(r["evergreen"]), cfg.half_life_days)
        if abs(value - r["strength"]) > CHANGE_EPSILON:
            changes.append((value, r["id"]))
    if changes:
        with db.transaction(st.con):
            sql.set_strengths(st.con, changes)
    return {"store": st.name, "chunks": len(rows), "updated": len(changes),
            "seconds": round(time.perf_counter() - t0, 3)}


def born(row: dict) -> float:
    """When a chunk's memory began: a memory's own date, else when its text was first indexed."""
    if row["kind"] == "memory" and row["memory_date"]:
        try:
            return datetime.fromisoformat(row["memory_date"]).timestamp()
        except ValueError:
            pass
    return row["created_at"]


def cleanup_store(st: Store, trash_days: float = Config.trash_days,
                  decisions_days: float = Config.decisions_days) -> dict:
    """Drop rows of vanished files and orphans, optimise FTS, checkpoint the WAL, empty the trash and the decision
    log of what is past its retention (never what waits for review). Never touches Markdown."""
    t0 = time.perf_counter()
    report = {"store": st.name, "vanished_files": 0, "chunks_removed": 0, "orphan_vectors": 0,
              "fts_rebuilt": False, "trash_expired": trash.expire(st.root, trash_days),
              "decisions_expired": decision_log.expire(st.root, decisions_days)}
    vanished = [uri for uri in sql.document_uris(st.con) if not _is_note(st, uri)]
    strays = sql.uris_without_document(st.con)
    with db.transaction(st.con):
        for uri in sorted(set(vanished) | set(strays)):
            report["chunks_removed"] += sql.delete_by_uri(st.con, uri)
        report["vanished_files"] = len(vanished)
        report["orphan_vectors"] = sql.delete_orphan_vectors(st.con)
        report["dead_aliases"] = sql.prune_aliases(st.con)  # old ids of memories that are gone
        sql.trim_removals(st.con)  # the removal logs keep their newest entries (a kept copy older is made again)
        if sql.fts_integrity_problem(st.con) is not None:
            sql.rebuild_fts(st.con)  # orphan or missing FTS rows: rebuild from the chunks table
            report["fts_rebuilt"] = True
        sql.fts_optimize(st.con)
    report["wal"] = sql.wal_checkpoint(st.con)
    report["seconds"] = round(time.perf_counter() - t0, 3)
    return report


def _is_note(st: Store, uri: str) -> bool:
    """A document row is live while its file exists and is still an indexable note."""
    path = st.root / Path(*uri.split("/"))
    return path.is_file() and st.filter.uri_of(path) == uri and st.filter.admits(path)


def stale_files(st: Store) -> int:
    """Notes whose size or mtime differ from the index, plus indexed files that vanished (no hashing)."""
    known = sql.all_documents(st.con)
    # a note that cannot be indexed does not lag behind: it waits for its fix (a save changes its stat)
    skipped = {u: {"size": v[0], "mtime_ns": v[1]} for u, v in sql.skipped_notes(st.con).items()}
    lagging = 0
    for uri, path in st.filter.walk():
        doc = known.pop(uri, None) or skipped.get(uri)
        try:
            s = path.stat()
        except OSError:
            continue
        if doc is None or doc["size"] != s.st_size or doc["mtime_ns"] != s.st_mtime_ns:
            lagging += 1
    return lagging + len(known)
