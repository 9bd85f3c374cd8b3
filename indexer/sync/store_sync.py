"""Bring one store's index in step with its Markdown: stat, hash, chunk, embed new text, write."""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from indexer.index import db
from indexer.index import sql
from indexer.notes.chunker import CHUNKER_VERSION, parse_note
from indexer.notes.memory_items import text_to_embed
from indexer.config import Config
from indexer.errors import NoteError, ProviderUnavailable
from indexer.models import Note
from indexer.sync import ranking_vectors
from indexer.sync.continuity import write_note
from indexer.sync.restated import RestatementFinder
from indexer.notes.scanner import decode_note, read_note
from indexer.index.stores import Store
from indexer.models import SyncReport  # noqa: F401  (re-exported: callers read reports from sync)

# an edit's new texts get their e5 vectors before it returns (~65 short memories/s, 2 threads); a bigger
# change leaves the rest to the daemon's idle fill (or `index`, which fills all)
EDIT_E5_TEXTS = 16
FILES_PER_BATCH = 32  # parse this many changed files, embed their new text together, then write
CHUNKING_KEY = "chunking"


@dataclass
class _Pending:
    uri: str
    size: int
    mtime_ns: int
    sha256: str
    note: Note | None  # None: only the stat changed, the text did not


def sync_store(st: Store, embedder, cfg: Config, progress=None, warn=None, reinforce: bool = True,
               cache: dict | None = None, e5_limit: int | None = None,
               e5_seconds: float | None = None) -> SyncReport:
    """Incremental sync of a whole store: new, changed and deleted files only.

    Embedding runs one batch ahead on its own thread: while the model embeds a batch's new text
    (numpy's matrix products release the GIL), this thread parses the next batch and writes the
    previous one, so a build keeps every core busy instead of waiting on the model. The ranking model's
    vectors get e5_seconds at the end (cfg.ranking_fill_s when None; below 0 fills all); the rest wait for
    the daemon or the next sync.
    """
    t0 = time.perf_counter()
    report = SyncReport(store=st.name)
    known = sql.all_documents(st.con)
    # notes chunked with other settings are read again, whatever their stat says
    rechunk = sql.read_meta(st.con).get(CHUNKING_KEY) != chunking_id(cfg)
    if rechunk and not known and not st.readonly:
        # a first build: every note it writes is chunked this way, so a build killed part way and run again
        # reads only the notes it had not written (at 1M chunks, re-reading the first half cost 100 s)
        _record_chunking(st, cfg)
        rechunk = False
    changed_since = {} if rechunk else known
    # a note skipped for its name has no uri: its message stands for it in the store's list
    notes = list(st.filter.walk(warn=lambda message: report.skip(message, warn, (message, None, None))))
    # one finder for the whole sync: a big first build reads the vectors once, not once per new text
    finder = RestatementFinder(st.con, cfg.similar_threshold, st.kept) if reinforce and st.with_vec else None
    report.files = len(notes)
    seen = set()
    batch: list[tuple[str, Path]] = []
    ahead: _Prepared | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mdmem-embed") as pool:
        for i, (uri, path) in enumerate(notes):
            seen.add(uri)
            batch.append((uri, path))
            if len(batch) >= FILES_PER_BATCH or i == len(notes) - 1:
                prepared = _prepare(st, batch, embedder, cfg, report, changed_since, warn, cache, pool, ahead)
                if ahead is not None:
                    _write(st, ahead, cfg, report, warn, reinforce, finder)
                ahead, batch = prepared, []
            if progress:
                progress(i + 1, len(notes))
        if ahead is not None:
            _write(st, ahead, cfg, report, warn, reinforce, finder)
    # the restatement matrix (40 MB at 61k chunks) goes before the full-text merge below adds its own peak
    finder = ahead = None
    for uri in sorted(set(known) - seen):
        remove_file(st, uri, report)
    fill_missing_vectors(st, embedder, report)
    # committed above, so the store already answers (full text + first model) while e5 fills in
    if embedder.dim:  # a text-only store (`embedder = "none"`) runs no model at all
        wait = cfg.ranking_fill_s if e5_seconds is None else e5_seconds
        ranking_vectors.after_sync(st, cfg, e5_limit, None if wait < 0 else wait, report.embedded)
    if not st.readonly:
        sql.fts_optimize_after_bulk(st.con, report.chunks_added)
    if not st.readonly:  # every note without a document row was read again above: this is all of them
        with db.transaction(st.con):
            sql.put_skipped_notes(st.con, report.left_out)
    if rechunk and not st.readonly:  # recorded last: an interrupted re-chunk starts over next time
        _record_chunking(st, cfg)
    report.seconds = time.perf_counter() - t0
    return report


def _record_chunking(st: Store, cfg: Config) -> None:
    with db.transaction(st.con):
        sql.write_meta(st.con, {CHUNKING_KEY: chunking_id(cfg), "chunker": CHUNKER_VERSION})


def chunking_id(cfg: Config) -> str:
    """How an index's notes were chunked: the chunker's version and its settings (a change re-chunks all)."""
    return f"{CHUNKER_VERSION}:target={cfg.chunk_target_tokens},max={cfg.chunk_max_tokens}"


def index_paths(st: Store, paths: list[Path], embedder, cfg: Config, warn=None, reinforce: bool = True) -> SyncReport:
    """Index (or drop) specific paths, e.g. from watcher events or after `add`."""
    t0 = time.perf_counter()
    report = SyncReport(store=st.name)
    present = []
    for path in paths:
        uri = st.filter.uri_of(path)
        if uri is None:
            why = st.filter.why_skipped(path)
            if why and Path(path).is_file():
                report.skip(why, warn)
            continue
        if Path(path).is_file() and st.filter.admits(path):
            present.append((uri, Path(path)))
        elif sql.get_document(st.con, uri) is not None or sql.chunks_for_uri(st.con, uri):
            remove_file(st, uri, report)
    report.files = len(present)
    known = {uri: sql.get_document(st.con, uri) for uri, _ in present}
    # while vectors wait for a provider that was down, a save does not ask it again (each ask may take its
    # whole deadline): its text joins the waiting ones, which the daemon's retries fill together
    report.vectors_pending = sql.vectors_pending(st.con) if st.with_vec else 0
    index_files(st, present, embedder, cfg, report, {k: v for k, v in known.items() if v}, warn, reinforce)
    _note_skipped(st, {st.filter.uri_of(p) for p in paths} - {None}, report)
    if report.vectors_pending and not st.readonly:
        with db.transaction(st.con):
            sql.set_vectors_pending(st.con, len(sql.hashes_missing_vectors(st.con)))
    if embedder.dim:
        ranking_vectors.after_sync(st, cfg, EDIT_E5_TEXTS)
    report.seconds = time.perf_counter() - t0
    return report


def _stat_of(uri: str, path: Path) -> tuple | None:
    try:
        s = path.stat()
    except OSError:
        return None
    return uri, s.st_size, s.st_mtime_ns


def _note_skipped(st: Store, looked_at: set[str], report: SyncReport) -> None:
    """Keep the store's list of skipped notes in step with the notes just looked at."""
    if st.readonly:
        return
    before = sql.skipped_notes(st.con)
    after = {u: v for u, v in before.items() if u not in looked_at}
    after.update(report.left_out)
    if after != before:
        with db.transaction(st.con):
            sql.put_skipped_notes(st.con, after)


def remove_file(st: Store, uri: str, report: SyncReport) -> None:
    with db.transaction(st.con):
        with_vec = sql.has_vec_table(st.con)
        rows = [(r, sql.vector_for_id(st.con, r["id"]) if with_vec else None) for r in sql.chunks_for_uri(st.con, uri)]
        report.chunks_removed += sql.delete_by_uri(st.con, uri, st.with_vec)
        for r, vec in rows:  # a memory moved to another note takes its counters (and vector) along
            st.released.release(st.con, r, vec)
    report.deleted += 1


@dataclass
class _Prepared:
    """One batch parsed, its known vectors found and its new text handed to the model."""

    pending: list[_Pending]
    vectors: dict[str, np.ndarray]  # hash -> vector: reused now, embedded ones added by resolve()
    todo: list[str]  # hashes this batch embeds
    embedding: Future | None = None
    borrowed: dict[str, "_Prepared"] = field(default_factory=dict)  # text the batch before embeds
    unavailable: bool = False  # the provider did not answer: this batch's new text waits for its vectors

    def resolve(self) -> dict[str, np.ndarray]:
        """The batch's vectors; text a provider that is down could not embed has none (it waits)."""
        if self.embedding is not None:
            try:
                self.vectors.update(zip(self.todo, self.embedding.result()))
            except ProviderUnavailable:
                self.unavailable = True
            self.embedding = None
        for h, other in self.borrowed.items():
            if other.vectors.get(h) is not None:
                self.vectors[h] = other.vectors[h]
        self.borrowed = {}
        return self.vectors


def index_files(st: Store, batch, embedder, cfg: Config, report: SyncReport, known: dict, warn, reinforce: bool,
                cache: dict | None = None, finder: RestatementFinder | None = None) -> None:
    prepared = _prepare(st, batch, embedder, cfg, report, known, warn, cache)
    if prepared is not None:
        _write(st, prepared, cfg, report, warn, reinforce, finder)


def _prepare(st: Store, batch, embedder, cfg: Config, report: SyncReport, known: dict, warn, cache=None,
             pool: ThreadPoolExecutor | None = None, before: _Prepared | None = None) -> _Prepared | None:
    """Read and parse what changed; start embedding its new text (on pool's thread when given)."""
    pending: list[_Pending] = []
    for uri, path in batch:
        try:
            item = _read_changed(uri, path, known.get(uri), cfg)
        except NoteError as exc:
            report.skip(str(exc), warn, _stat_of(uri, path))
            continue
        if item is None:
            report.unchanged += 1
        else:
            pending.append(item)
    if not pending:
        return None
    in_flight = set(before.todo) if before is not None else set()
    vectors, todo = _known_vectors(st, [p.note for p in pending if p.note], cache, in_flight)
    prepared = _Prepared(pending, vectors, list(todo))
    prepared.borrowed = {h: before for h in prepared.vectors.keys() & in_flight}
    for h in prepared.borrowed:
        del prepared.vectors[h]
    if todo and report.vectors_pending:
        prepared.unavailable = True  # the provider was down for a batch of this sync: the rest wait, unasked
    elif todo:
        texts = list(todo.values())
        if pool is None:  # a save: its text is written before any retry (the filler retries with backoff)
            embed = getattr(embedder, "try_documents", embedder.embed_documents)
            try:
                prepared.vectors.update(zip(prepared.todo, embed(texts)))
            except ProviderUnavailable:
                prepared.unavailable = True
        else:
            prepared.embedding = pool.submit(embedder.embed_documents, texts)
    return prepared


def _write(st: Store, prepared: _Prepared, cfg: Config, report: SyncReport, warn, reinforce: bool,
           finder: RestatementFinder | None) -> None:
    """Write a prepared batch in one transaction once its vectors are there.

    A batch holds at most FILES_PER_BATCH files, so the write lock is held for tens of
    milliseconds; a commit per file cost a build about a sixth of its writing time.
    """
    vectors = prepared.resolve()
    fresh = {h for h in prepared.todo if vectors.get(h) is not None}
    report.vectors_pending += len(prepared.todo) - len(fresh)
    report.embedded += len(fresh)
    if reinforce and st.with_vec:
        finder = finder or RestatementFinder(st.con, cfg.similar_threshold, st.kept)
        finder.start_batch({h: vectors[h] for h in fresh})
    with db.transaction(st.con):
        for p in prepared.pending:
            if p.note is not None:
                counts = write_note(st.con, p.note, vectors, cfg.similar_threshold, p.mtime_ns, st.released)
                report.chunks_added += counts["added"]
                report.chunks_kept += counts["kept"]
                report.chunks_removed += counts["removed"]
                if reinforce and st.with_vec:
                    report.reinforced += _reinforce_restated(st, p.note, counts["new_hashes"], fresh, vectors, finder)
                    finder.written(p.note, vectors)
                for w in p.note.warnings:
                    report.caveat(w, warn)
            sql.put_document(st.con, p.uri, p.size, p.mtime_ns, p.sha256)
            report.indexed += p.note is not None


def _read_changed(uri: str, path: Path, doc: dict | None, cfg: Config) -> _Pending | None:
    """None when the file is unchanged: same size and mtime, or same bytes."""
    try:
        st0 = path.stat()
    except OSError as exc:
        raise NoteError(f"{uri}: cannot stat ({exc.strerror or exc})") from exc
    if doc and doc["size"] == st0.st_size and doc["mtime_ns"] == st0.st_mtime_ns:
        return None
    data, st1 = read_note(path, uri)
    sha = hashlib.sha256(data).hexdigest()
    if doc and doc["sha256"] == sha:
        return _Pending(uri, st1.st_size, st1.st_mtime_ns, sha, None)
    note = parse_note(decode_note(data, uri), uri, cfg.chunk_target_tokens, cfg.chunk_max_tokens)
    return _Pending(uri, st1.st_size, st1.st_mtime_ns, sha, note)


def _known_vectors(st: Store, notes: list[Note], cache: dict | None, in_flight: set[str]) -> tuple[dict, dict]:
    """(hash -> vector reused from the cache or the store, hash -> text still to embed) for these notes.

    Text the batch before is embedding right now is marked with a None vector: borrowed, not embedded twice.
    """
    if not st.with_vec:
        return {}, {}
    vectors: dict[str, np.ndarray] = {}
    todo: dict[str, str] = {}
    for note in notes:
        # text this note already holds keeps its row and vector: one edit in a 10,000-memory note
        # must not look up 10,000 vectors
        have = sql.hashes_for_uri(st.con, note.uri)
        for ch in note.chunks:
            h = ch.content_hash
            if h in vectors or h in todo or h in have:
                continue
            v = cache.get(h) if cache else None
            if v is None and h in in_flight:
                vectors[h] = None
                continue
            if v is None:
                v = st.released.vector(h)  # e.g. a note saved by truncating it first
            if v is None:
                v = sql.vector_for_hash(st.con, h)
            if v is not None:
                vectors[h] = v
            else:
                todo[h] = text_to_embed(ch.content, ch.kind, ch.section)
    return vectors, todo


def _reinforce_restated(st: Store, note: Note, new_hashes: list[str], fresh: set[str], vectors,
                        finder: RestatementFinder) -> int:
    """A memory stated again elsewhere strengthens the existing one (once per new text)."""
    bumped = 0
    for h in new_hashes:
        if h not in fresh:
            continue  # text already known to the store is not a restatement
        fresh.discard(h)
        similar = finder.most_similar(vectors[h], h, note.uri)
        if similar:
            sql.increment_reinforcement(st.con, [similar])
            bumped += 1
    return bumped


def fill_missing_vectors(st: Store, embedder, report: SyncReport, batch: int = 64, limit: int | None = None) -> int:
    """Chunks indexed while no model could load, or while the provider was down, get their vectors once it
    answers (one write per batch: what was made stays when it goes down again), up to limit texts (all when
    None). Returns the texts still waiting, also kept in the store's meta for status and search."""
    if not st.with_vec or st.readonly:
        return 0
    missing = sql.hashes_missing_vectors(st.con)
    hashes = list(missing)
    done = 0
    try:
        # a provider that went down during this sync is not asked again before its next one
        for i in range(0, min(len(hashes), limit or len(hashes)) if not report.vectors_pending else 0, batch):
            part = hashes[i:i + batch]
            vecs = embedder.embed_documents([text_to_embed(missing[h]["content"], missing[h]["kind"],
                                                            missing[h]["section"]) for h in part])
            with db.transaction(st.con):
                sql.fill_vectors(st.con, dict(zip(part, vecs)))
            done += len(part)
    except ProviderUnavailable:
        pass  # the rest wait: the daemon tries again, and so does the next sync
    report.embedded += done
    report.vectors_pending = len(hashes) - done
    if report.vectors_pending or sql.vectors_pending(st.con):
        with db.transaction(st.con):
            sql.set_vectors_pending(st.con, report.vectors_pending)
    return report.vectors_pending
