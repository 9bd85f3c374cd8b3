"""Check that each store's index holds exactly what its Markdown says, and repair what differs."""

from __future__ import annotations

import hashlib

from indexer.index import db
from indexer.index import sql
from indexer.notes.chunker import parse_note
from indexer.config import Config
from indexer.errors import (CorruptIndexError, DiskFullError, NoteError, ReadOnlyStoreError, StoreBusyError,
                            StoreError)
from indexer.notes.scanner import decode_note, read_note
from indexer.index.stores import Store
from indexer.models import Difference, SyncReport, VerifyReport  # noqa: F401  (re-exported)
from indexer.sync.store_sync import fill_missing_vectors, index_paths

# Differences that only a whole-store repair can fix (the per-file ones name a uri).
_FTS = "fts"
_STORE_WIDE = {"integrity", "dimension"}


def verify_store(st: Store, cfg: Config, embedder=None) -> VerifyReport:
    """Compare one store's index with its notes; read-only (FTS5's check runs in a rolled-back write)."""
    rep = VerifyReport(store=st.name)
    diffs = rep.differences
    con = st.con
    problems = [p for p in db.quick_check(con) if p != "ok"]
    if problems:
        diffs.append(Difference("integrity", "", "; ".join(problems[:5])))
        return rep  # nothing below can be trusted on a damaged file
    files = dict(st.filter.walk(warn=rep.skipped.append))  # notes left out by name, as `index` counts them
    rep.files = len(files)
    docs = sql.all_documents(con)
    indexed_uris = sql.chunk_uris(con)
    try:
        for uri, path in files.items():
            _check_file(st, cfg, uri, path, docs.get(uri), rep)
    except CorruptIndexError as exc:
        diffs.append(Difference("integrity", "", str(exc)))
        return rep
    for uri in sorted((set(docs) | indexed_uris) - set(files)):
        diffs.append(Difference("vanished", uri, "indexed but the note is gone or no longer a note"))
    _check_vectors(st, embedder, rep)
    try:
        _check_fts(con, rep)
    except (StoreBusyError, DiskFullError, ReadOnlyStoreError):
        raise
    except StoreError as exc:
        diffs.append(Difference(_FTS, "", f"full-text index unreadable ({exc})"))
    rep.found = len(diffs)
    return rep


def damaged(name: str, exc: Exception) -> VerifyReport:
    """The report for an index that cannot even be opened."""
    return VerifyReport(store=name, differences=[Difference("integrity", "", str(exc))], found=1)


def needs_rebuild(rep: VerifyReport) -> bool:
    """Damage that re-indexing single notes cannot fix: a broken file or a wrong vector table."""
    return any(d.kind in _STORE_WIDE for d in rep.differences)


def _check_file(st: Store, cfg: Config, uri: str, path, doc: dict | None, rep: VerifyReport) -> None:
    try:
        data, _stat = read_note(path, uri)
        want = {c.id: c for c in parse_note(decode_note(data, uri), uri, cfg.chunk_target_tokens,
                                            cfg.chunk_max_tokens).chunks}
    except NoteError as exc:
        rep.skipped.append(str(exc))  # the indexer skips it too; the message says what to do
        return
    rows = sql.chunks_for_uri(st.con, uri)
    rep.chunks += len(rows)
    if doc is None:
        rep.differences.append(Difference("unindexed", uri, "note has no document row"))
        return
    if doc["sha256"] != hashlib.sha256(data).hexdigest():
        rep.differences.append(Difference("changed", uri, "note changed since it was indexed"))
        return
    have = {r["id"]: r for r in rows}
    missing = [want[i] for i in want if i not in have]
    extra = [have[i] for i in have if i not in want]
    wrong = [i for i in want.keys() & have.keys() if not _same(want[i], have[i])]
    if missing or extra or wrong:
        parts = []
        if missing:
            parts.append(f"{len(missing)} chunk(s) missing (first at line {missing[0].start_line})")
        if extra:
            parts.append(f"{len(extra)} stale chunk(s) (first at line {extra[0]['start_line']})")
        if wrong:
            parts.append(f"{len(wrong)} chunk(s) with wrong text or lines")
        rep.differences.append(Difference("chunks", uri, ", ".join(parts)))


def _same(chunk, row: dict) -> bool:
    return (row["content"] == chunk.content and row["start_line"] == chunk.start_line
            and row["end_line"] == chunk.end_line and row["content_hash"] == chunk.content_hash
            and row["section"] == chunk.section)


def _check_vectors(st: Store, embedder, rep: VerifyReport) -> None:
    con = st.con
    if not sql.has_vec_table(con):
        return
    meta = sql.read_meta(con)
    declared = sql.vec_table_dimension(con)
    recorded = int(meta.get("dimension") or 0)
    if declared != recorded:
        rep.differences.append(Difference("dimension", "", f"vector table holds {declared}-d vectors, meta says {recorded}"))
        return
    bad_len = sql.vectors_of_wrong_length(con, declared)
    if bad_len:
        rep.differences.append(Difference("dimension", "", f"{len(bad_len)} vector(s) are not {declared}-d"))
    orphans = sql.orphan_vector_ids(con)
    if orphans:
        rep.differences.append(Difference("orphan-vectors", "", f"{len(orphans)} vector(s) without a chunk"))
    # vectors are only expected while the configured model is the one that built the index
    if embedder is not None and embedder.dim and meta.get("embedder") == embedder.model_id:
        missing = sql.chunks_without_vector(con)
        for uri in sorted({r["uri"] for r in missing}):
            n = sum(1 for r in missing if r["uri"] == uri)
            rep.differences.append(Difference("missing-vectors", uri, f"{n} chunk(s) without a vector"))


def _check_fts(con, rep: VerifyReport) -> None:
    missing = sql.chunks_missing_fts(con)
    if missing:
        rep.differences.append(Difference(_FTS, "", f"{len(missing)} chunk(s) absent from full text (first {missing[0]['uri']})"))
    orphans = sql.fts_orphan_rowids(con)
    if orphans:
        rep.differences.append(Difference(_FTS, "", f"{len(orphans)} full-text row(s) without a chunk"))
    if not missing and not orphans and not db.is_readonly(con):  # FTS5's check is a write, rolled back
        with db.rolled_back(con):
            problem = sql.fts_integrity_problem(con)
        if problem:
            rep.differences.append(Difference(_FTS, "", f"full-text index disagrees with chunks ({problem})"))


def repair_store(st: Store, cfg: Config, embedder, rep: VerifyReport, warn=None) -> list[str]:
    """Re-index only what differs; returns what was done (a damaged file needs `mdmem rebuild`)."""
    done: list[str] = []
    kinds = {d.kind for d in rep.differences}
    if needs_rebuild(rep):
        return done  # the caller rebuilds the whole store
    uris = sorted({d.uri for d in rep.differences if d.uri and d.kind != "missing-vectors"})
    fts_touched = _FTS in kinds
    for uri in uris:
        with db.transaction(st.con):
            if any(d.uri == uri and d.kind == "chunks" for d in rep.differences):
                # rows may disagree with FTS, so drop them without FTS deletes and re-derive FTS below
                sql.delete_chunk_rows(st.con, uri)
                fts_touched = True
            sql.delete_document(st.con, uri)
    if uris:
        index_paths(st, [st.root / u for u in uris], embedder, cfg, warn=warn, reinforce=False)
        done.append(f"re-indexed {len(uris)} note(s)")
    if "orphan-vectors" in kinds:
        with db.transaction(st.con):
            sql.delete_vectors(st.con, sql.orphan_vector_ids(st.con))
        done.append("dropped vectors without a chunk")
    if fts_touched:
        with db.transaction(st.con):
            sql.rebuild_fts(st.con)
        done.append("rebuilt the full-text index from the chunks")
    if st.with_vec:
        filled = SyncReport(store=st.name)
        fill_missing_vectors(st, embedder, filled)
        if filled.embedded:
            done.append(f"embedded {filled.embedded} missing vector(s)")
    return done


def check_store(name: str, open_store, cfg: Config, embedder, repair: bool, rebuild, warn=None) -> VerifyReport:
    """Verify one store (`open_store()` gives its handle); with repair, fix what differs and check again.

    Differences only a whole rebuild can fix call `rebuild()`, then the store is opened again.
    """
    try:
        st = open_store()
        rep = verify_store(st, cfg, embedder)
    except CorruptIndexError as exc:
        rep = damaged(name, exc)
        if not repair:
            return rep
    if repair and not rep.ok:
        if needs_rebuild(rep):
            rebuild()
            done = ["rebuilt the whole index from the notes"]
            st = open_store()
        else:
            done = repair_store(st, cfg, embedder, rep, warn=warn)
        found = rep.found
        rep = verify_store(st, cfg, embedder)
        rep.repaired, rep.found = done, found
    return rep
