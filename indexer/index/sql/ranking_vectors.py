"""The ranking model's vectors: one row per distinct chunk text (content_hash), so moves and rebuilds reuse them."""

from __future__ import annotations

import numpy as np

from indexer.index import db

_TABLE = "CREATE TABLE IF NOT EXISTS chunks_e5(content_hash TEXT PRIMARY KEY, vector BLOB NOT NULL)"


def has_e5_table(con) -> bool:
    return bool(db.rows(con, "SELECT 1 AS x FROM sqlite_master WHERE name = 'chunks_e5'"))


def bind_e5(con, model_id: str) -> None:
    """Create the table; vectors of another model (meta e5_model) are dropped, to be filled again."""
    con.execute(_TABLE)
    have = db.rows(con, "SELECT value FROM meta WHERE key = 'e5_model'")
    if have and have[0]["value"] == model_id:
        return
    con.execute("DELETE FROM chunks_e5")
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('e5_model', ?)", (model_id,))


def e5_missing(con, limit: int) -> list[dict]:
    """Up to limit distinct chunk texts without an e5 vector (content_hash, content, kind, section)."""
    if not has_e5_table(con):
        return []
    return db.rows(con, "SELECT c.content_hash AS content_hash, min(c.content) AS content, min(c.kind) AS kind,"
                        " min(c.section) AS section FROM chunks c LEFT JOIN chunks_e5 e"
                        " ON e.content_hash = c.content_hash WHERE e.content_hash IS NULL"
                        " GROUP BY c.content_hash LIMIT ?", (int(limit),))


def put_e5(con, vectors: dict[str, np.ndarray]) -> None:
    for h, v in vectors.items():
        con.execute("INSERT OR REPLACE INTO chunks_e5(content_hash, vector) VALUES(?, ?)",
                    (h, np.asarray(v, dtype=np.float32).tobytes()))


def e5_vectors(con, hashes: list[str]) -> dict[str, np.ndarray]:
    """content_hash -> vector for those that have one (none when the table is absent)."""
    return _vectors_by(con, "SELECT content_hash AS k, vector FROM chunks_e5 WHERE content_hash IN", hashes)


def e5_vectors_of_chunks(con, ids: list[str]) -> dict[str, np.ndarray]:
    """chunk id -> its text's e5 vector, for the chunks that have one (none when the table is absent)."""
    return _vectors_by(con, "SELECT c.id AS k, e.vector AS vector FROM chunks c JOIN chunks_e5 e"
                            " ON e.content_hash = c.content_hash WHERE c.id IN", ids)


def _vectors_by(con, select: str, keys: list[str]) -> dict[str, np.ndarray]:
    if not keys or not has_e5_table(con):
        return {}
    out = {}
    for i in range(0, len(keys), 500):
        part = keys[i:i + 500]
        for r in db.rows(con, f"{select} ({','.join('?' * len(part))})", tuple(part)):
            out[r["k"]] = np.frombuffer(r["vector"], dtype=np.float32)
    return out


def e5_all(con) -> dict[str, bytes]:
    """Every stored e5 vector as bytes (a rebuild carries them into the new file)."""
    if not has_e5_table(con):
        return {}
    return {r["content_hash"]: r["vector"] for r in db.rows(con, "SELECT content_hash, vector FROM chunks_e5")}


def e5_progress(con) -> tuple[int, int]:
    """(distinct chunk texts with an e5 vector, distinct chunk texts)."""
    total = db.rows(con, "SELECT count(DISTINCT content_hash) AS n FROM chunks")[0]["n"]
    if not has_e5_table(con):
        return 0, total
    done = db.rows(con, "SELECT count(*) AS n FROM chunks_e5 e WHERE EXISTS"
                        " (SELECT 1 FROM chunks c WHERE c.content_hash = e.content_hash)")[0]["n"]
    return done, total


def delete_orphan_e5(con) -> int:
    """Vectors of texts no chunk holds any more."""
    if not has_e5_table(con):
        return 0
    con.execute("DELETE FROM chunks_e5 WHERE content_hash NOT IN (SELECT content_hash FROM chunks)")
    return con.changes()
