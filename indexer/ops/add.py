"""`add`: screen a memory for secrets, reinforce a near-duplicate or append it, and index it at once."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from indexer import validation
from indexer.index import db
from indexer.index import sql
from indexer.ops import sync
from indexer.ops.cite import cited_range
from indexer.errors import InputError, MdmemError
from indexer.notes.privacy import screen
from indexer.notes.append import append_entry, choose_target, format_entry, new_note_header, strip_item

MAX_ADD_CHARS = 8_000
DEDUP_CANDIDATES = 5  # chunks per store whose lines are compared one by one


def normalise(text: str) -> str:
    """The memory itself, without list marker, stamp or spacing differences (for comparisons)."""
    return " ".join(strip_item(text).split()).casefold()


def add_memory(mem, text: str, type_: str = "fact", importance: int | None = None, scope: str | None = None,
               file: str | None = None, redact: bool = False, now: datetime | None = None) -> dict:
    """Write one memory to Markdown (or reinforce its twin) and index it before returning."""
    text = validation.text("text", text, '"I prefer tea"')
    if len(text) > MAX_ADD_CHARS:
        raise InputError(f"memory is {len(text)} characters; keep one memory under {MAX_ADD_CHARS} or write a note")
    importance = validation.importance(importance)
    text, redacted = screen(text.strip(), redact)  # before anything touches disk or the index
    target = choose_target(mem.cfg, type_, scope, file, now)
    base = {"uri": target.uri, "store": target.store, "path": str(target.path), "type": type_, "redacted": redacted}
    twin = _find_twin(mem, text)
    if twin is not None:
        return {**base, **twin, "action": "reinforced"}
    entry = format_entry(text, type_, journal=target.uri.startswith("journal/") and not file, now=now)
    start, end = append_entry(target, entry, new_note_header(target.title, type_, importance))
    indexed = _index_now(mem, target)
    if indexed:  # report the lines a search hit on this memory will show
        start, end = cited_range(mem.stores(target.store)[0], target.uri, start, end)
    return {**base, "action": "appended", "start_line": start, "end_line": end, "indexed": indexed}


def _find_twin(mem, text: str) -> dict | None:
    """The stored memory this text restates (≥ add_dedupe_threshold), reinforced; None if new."""
    try:
        stores = mem.stores("all")
        emb = mem.embedder
        vec = emb.embed_documents([text])[0] if emb.dim else None
    except (MdmemError, db.Error) as exc:
        mem._warn(f"cannot check for an existing copy ({exc}); appending anyway")
        return None
    want = normalise(text)
    lines = []  # (store, row, line offset, normalised line)
    for st in stores:
        rows = sql.vector_search(st.con, vec, DEDUP_CANDIDATES) if vec is not None and st.with_vec else []
        for row in rows:
            for off, line in enumerate(row["content"].split("\n")):
                norm = normalise(line)
                if norm and not line.lstrip().startswith("#"):
                    lines.append((st, row, off, norm))
    if not lines:
        return None
    exact = [item for item in lines if item[3] == want]
    if exact:
        best, sim = exact[0], 1.0
    else:
        # chunks merge several items, so compare the memory with each item, not the chunk
        sims = emb.embed_documents([item[3] for item in lines]) @ np.asarray(vec, dtype=np.float32)
        i = int(np.argmax(sims))
        best, sim = lines[i], float(sims[i])
        if sim < mem.cfg.add_dedupe_threshold:
            return None
    st, row, _off, _ = best
    with db.transaction(st.con):
        sql.increment_reinforcement(st.con, [row["id"]])
    fresh = sql.chunks_by_ids(st.con, [row["id"]])
    return {"uri": row["uri"], "store": st.name, "path": str(st.root / row["uri"]), "start_line": row["start_line"],
            "end_line": row["end_line"], "chunk_id": row["id"], "similarity": round(sim, 4),
            "reinforcement": fresh[0]["reinforcement"] if fresh else None}


def _index_now(mem, target) -> bool:
    """Make the memory searchable now; the note is written either way (the daemon catches up)."""
    try:
        st = next(s for s in mem.stores(target.store) if s.name == target.store)
        sync.index_paths(st, [target.path], mem.embedder, mem.cfg, warn=mem._warn)
        return True
    except (MdmemError, db.Error, StopIteration) as exc:
        mem._warn(f"{target.uri}: written but not indexed yet ({exc}); run `mdmem index`")
        return False
