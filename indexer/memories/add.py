"""`add`: screen a memory for secrets, reinforce a near-duplicate or append it, and index it at once."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from indexer import validation
from indexer.protocol import Writer
from indexer.index import sql
from indexer.memories.cite import cited_chunk
from indexer.memories.likeness import same_words
from indexer.errors import InputError, MdmemError
from indexer.notes import clock
from indexer.notes import item_metadata
from indexer.notes.privacy import screen
from indexer.notes.spaces import space_name, space_uri
from indexer.notes.struck_lines import marked
from indexer.retrieval.collect import space_filter
from indexer.notes.append import append_entry, choose_target, format_entry, new_note_header, strip_item

MAX_ADD_CHARS = 8_000
JOURNAL_TYPE = "episodic"  # a new journal's own type; other memories in it carry `<!-- type: … -->`
DEDUP_CANDIDATES = 5  # chunks per store whose lines are compared one by one


def normalise(text: str) -> str:
    """The memory itself, without list marker, stamp or spacing differences (for comparisons)."""
    return " ".join(strip_item(text).split()).casefold()


def add_memory(text: str, *, cfg, stores, embedder, writes: Writer, warn, type_: str = "fact",
               importance: int | None = None, scope: str | None = None, file: str | None = None,
               redact: bool = False, now: datetime | None = None, space: str | None = None,
               dedupe: bool = True) -> dict:
    """Write one memory to Markdown (or reinforce its twin) and index it before returning.

    `stores()` gives the open stores to look for a twin in; `writes` changes the index.
    """
    text = validation.text("text", text, '"I prefer tea"')
    if len(text) > MAX_ADD_CHARS:
        raise InputError(f"memory is {len(text)} characters; keep one memory under {MAX_ADD_CHARS} or write a note")
    importance = validation.importance(importance)
    text, redacted = screen(text.strip(), redact)  # before anything touches disk or the index
    space = space_name(space)
    now = now or clock.now(cfg.timezone)  # the day and time in the user's zone, wherever the daemon runs
    target = choose_target(cfg, type_, scope, file, now, space=space)
    base = {"uri": target.uri, "store": target.store, "path": str(target.path), "type": type_, "redacted": redacted}
    # a new value for a stored fact is close to it (70 → 65 公斤: cosine 0.96) but no duplicate: dedupe=False;
    # the memory restated is a twin whatever metadata comes with it (mem0 answers NONE)
    twin, near = _find_twin(item_metadata.without(text), stores, embedder, writes, cfg.add_dedupe_threshold, warn,
                            space) if dedupe else (None, None)
    if twin is not None:
        return {**base, **twin, "action": "reinforced"}
    journal = target.uri.startswith(space_uri(space, "journal/")) and not file
    # a journal holds a day's decisions and events alike: there each memory says its own type
    entry = format_entry(text, type_, journal=journal, now=now, importance=importance,
                         mark_type=journal and type_ != JOURNAL_TYPE)
    start, end = append_entry(target, entry, new_note_header(target.title, JOURNAL_TYPE if journal else type_))
    indexed = _index_now(target, writes, warn)
    record = None
    if indexed:  # report the lines and the id a search hit on this memory will show
        start, end, record = cited_chunk(stores(), target.store, target.uri, start, end)
    return {**base, "action": "appended", "id": record, "start_line": start, "end_line": end, "indexed": indexed,
            **({"near": near} if near and near["similarity"] >= cfg.review_similarity else {})}


def _find_twin(text: str, open_stores, emb, writes: Writer, threshold: float, warn,
               space: str | None = None) -> tuple[dict | None, dict | None]:
    """(the stored memory this text restates, reinforced; the closest other one) or None for either.

    A restatement has the same words (likeness.same_words: filler, case and punctuation aside) and a cosine of at
    least threshold; a near pair with another value (70 → 65 公斤: cosine 0.96) has other words and stays apart."""
    text = " ".join(strip_item(f"- {text}").split())  # as its line will read: a speaker's label is no word of it
    try:
        stores = open_stores()
        vec = emb.embed_documents([text])[0] if emb.dim else None
    except MdmemError as exc:
        warn(f"cannot check for an existing copy ({exc}); appending anyway")
        return None, None
    want = normalise(text)
    lines = []  # (store, row, line offset, normalised line, the line's memory as written)
    for st in stores:
        rows = sql.vector_search(st.con, vec, DEDUP_CANDIDATES, space=space_filter(st, space)) \
            if vec is not None and st.with_vec else []
        for row in rows:
            for off, line in enumerate(row["content"].split("\n")):
                norm = normalise(line)
                if norm and not line.lstrip().startswith("#") and not marked(line):
                    lines.append((st, row, off, norm, " ".join(strip_item(line).split())))
    if not lines:
        return None, None
    exact = [item for item in lines if item[3] == want]
    # chunks merge several items, so compare the memory with each item, not the chunk
    sims = [1.0] * len(lines) if exact else \
        (emb.embed_documents([item[4] for item in lines]) @ np.asarray(vec, dtype=np.float32)).tolist()
    order = sorted(range(len(lines)), key=lambda i: -sims[i])
    twin = next((i for i in order if lines[i][3] == want or (sims[i] >= threshold and same_words(lines[i][3], want))),
                None)
    if twin is None:
        st, row, _off, _norm, plain = lines[order[0]]
        return None, {"id": row["id"], "store": st.name, "uri": row["uri"], "text": plain,
                      "similarity": round(sims[order[0]], 4)}
    st, row = lines[twin][:2]
    return {"id": row["id"], "uri": row["uri"], "store": st.name, "path": str(st.root / row["uri"]),
            "start_line": row["start_line"],
            "end_line": row["end_line"], "chunk_id": row["id"], "similarity": round(sims[twin], 4),
            "reinforcement": writes.reinforce(st.name, row["id"])}, None


def _index_now(target, writes: Writer, warn) -> bool:
    """Make the memory searchable now; the note is written either way (the daemon catches up)."""
    try:
        writes.index_notes(target.store, [target.path])
        return True
    except MdmemError as exc:
        warn(f"{target.uri}: written but not indexed yet ({exc}); run `mdmem index`")
        return False
