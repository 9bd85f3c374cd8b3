"""Which stored row each new chunk of a note continues, so counters survive edits, moves and reorders."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import numpy as np

from indexer.index import sql
from indexer.index.released_rows import COUNTERS as _COUNTERS
from indexer.index.released_rows import Released
from indexer.models import Chunk, Note


@dataclass
class Step:
    """One chunk of the new note and the old row it continues.

    how: "same" (row kept as it is), "moved" (same text, other lines), "edited" (a memory's text
    changed in place or to a close paraphrase: counters carried, new vector), "new".
    """

    chunk: Chunk
    prev: dict | None
    how: str


def plan(note: Note, old: list[dict], new_vectors: dict[str, np.ndarray], old_vector, threshold: float) -> list[Step]:
    """Match each chunk to an old row of the same note: same id, then same text (lines moved),
    then for memories the one at the same line or the most similar one (>= threshold)."""
    by_id = {r["id"]: r for r in old}
    by_hash: dict[str, list[dict]] = {}
    for r in old:
        by_hash.setdefault(r["content_hash"], []).append(r)
    claimed: set[str] = set()
    steps: list[Step] = []
    for ch in note.chunks:
        prev, how = by_id.get(ch.id), "same"
        if prev is None or prev["id"] in claimed:
            prev = next((r for r in by_hash.get(ch.content_hash, []) if r["id"] not in claimed), None)
            how = "moved"
        if prev is not None:
            claimed.add(prev["id"])
        steps.append(Step(ch, prev, how if prev is not None else "new"))
    _match_edited(steps, [r for r in old if r["id"] not in claimed and r["kind"] == "memory"], new_vectors,
                  old_vector, threshold)
    return steps


def _match_edited(steps: list[Step], loose: list[dict], new_vectors, old_vector, threshold: float) -> None:
    """A new memory continues the unclaimed old one closest in meaning (>= threshold), else the one
    that stood on its first line (edited in place, however much)."""
    todo = [s for s in steps if s.how == "new" and s.chunk.kind == "memory"]
    if not todo or not loose:
        return
    _match_similar([s for s in todo if s.chunk.content_hash in new_vectors], loose, new_vectors, old_vector,
                   threshold)
    at_line = {r["start_line"]: r for r in loose if not any(s.prev is r for s in todo)}
    for s in todo:
        if s.how == "new" and s.chunk.start_line in at_line:
            s.prev, s.how = at_line.pop(s.chunk.start_line), "edited"


def _match_similar(todo: list[Step], loose: list[dict], new_vectors, old_vector, threshold: float) -> None:
    old_vecs = [(r, old_vector(r["id"])) for r in loose]
    old_vecs = [(r, v) for r, v in old_vecs if v is not None]
    if not todo or not old_vecs:
        return
    sims = np.stack([new_vectors[s.chunk.content_hash] for s in todo]) @ np.stack([v for _r, v in old_vecs]).T
    taken: set[int] = set()
    for i in np.argsort(-sims.max(axis=1)):  # the clearest pairs first
        order = [j for j in np.argsort(-sims[i]) if j not in taken]
        if order and sims[i, order[0]] >= threshold:
            taken.add(order[0])
            todo[i].prev, todo[i].how = old_vecs[order[0]][0], "edited"


def write_note(con, note: Note, vectors: dict[str, np.ndarray], threshold: float, mtime_ns: int,
               released: Released | None = None) -> dict:
    """Replace a file's rows with the note's chunks (call inside a transaction).

    Returns counts: kept, added, removed, and the hashes that are new text in this note.
    """
    now = time.time()
    with_vec = sql.has_vec_table(con)  # carried even when no model is loaded: never orphan or drop vectors
    old = sql.chunks_for_uri(con, note.uri)
    steps = plan(note, old, vectors, lambda cid: sql.vector_for_id(con, cid) if with_vec else None, threshold)
    kept = {id(s.prev) for s in steps if s.how in ("same", "moved")}
    continued = {id(s.prev) for s in steps if s.prev is not None}
    for r in old:
        if id(r) not in kept:
            gone = released is not None and id(r) not in continued
            vec = sql.vector_for_id(con, r["id"]) if gone and with_vec else None
            sql.delete_chunk(con, r, with_vec)
            if gone:
                released.release(con, r, vec)
    counts = {"kept": 0, "added": 0, "removed": 0, "new_hashes": []}
    for s in steps:
        ch, prev = s.chunk, s.prev
        fields = _fields(note, ch)
        if prev is not None:
            sql.add_alias(con, prev["id"], ch.id)  # the id an agent holds still finds the memory
        if s.how in ("same", "moved"):
            if s.how == "moved" and prev["section"] != ch.section:
                sql.delete_chunk(con, prev, with_vec)  # the FTS row holds the section: write it anew
                sql.insert_chunk(con, {**fields, **{k: prev[k] for k in _COUNTERS}, "updated_at": now})
                _vector(con, with_vec, ch, vectors)
            elif s.how == "moved":
                sql.move_chunk(con, prev["id"], ch.id, ch.start_line, ch.end_line, with_vec)
            if sql.meta_differs(prev, fields):
                sql.update_chunk_meta(con, ch.id, fields)
            counts["kept"] += 1
            continue
        carried = {k: prev[k] for k in _COUNTERS} if prev is not None else None
        if carried is None and released is not None:
            carried = released.claim(ch.content_hash, ch.id)
            if carried is not None:
                sql.add_alias(con, carried.pop("id"), ch.id)
        fresh = dict(reinforcement=0.0, access_count=0, created_at=now, accessed_at=None, strength=1.0)
        sql.insert_chunk(con, {**fields, **(carried or fresh), "updated_at": now})
        _vector(con, with_vec, ch, vectors)
        counts["added"] += 1
        counts["new_hashes"].append(ch.content_hash)
    counts["removed"] = len(old) - sum(1 for s in steps if s.prev is not None)
    return counts


def _vector(con, with_vec: bool, ch: Chunk, vectors) -> None:
    vec = vectors.get(ch.content_hash) if with_vec else None
    if vec is None and with_vec:
        vec = sql.vector_for_hash(con, ch.content_hash)
    if vec is not None:
        sql.put_vector(con, ch.id, vec)


def _fields(note: Note, ch: Chunk) -> dict:
    tags = list(dict.fromkeys([*note.tags, *ch.tags]))
    return dict(id=ch.id, uri=ch.uri, start_line=ch.start_line, end_line=ch.end_line, content=ch.content,
                content_hash=ch.content_hash, parent_dir=note.parent_dir, type=ch.type or note.type,
                section=ch.section,
                importance=ch.importance or note.importance, token_count=ch.token_count,
                evergreen=int(note.evergreen), tags=json.dumps(tags, ensure_ascii=False), kind=ch.kind,
                memory_date=ch.date)  # undated stays undated: a copy's or an edit's time is no memory's date
