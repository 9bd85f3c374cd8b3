"""The library face of mdmem: `Memory` opens the stores once and runs every operation on them; its index
writes go to a `Writer` (at once in this process, or as the daemon's jobs)."""

from __future__ import annotations

import functools
import time
from pathlib import Path

from indexer import config as config_mod
from indexer import validation
from indexer.config import Config
from indexer.providers import load_embedder
from indexer.providers.rankers import Rankers
from indexer.index import sql
from indexer.index.stores import Store, open_store, store_roots
from indexer.kept.owner import KeptCopies
from indexer.memories import usage
from indexer.models import Hit, SyncReport, VerifyReport
from indexer.notes import clock
from indexer.notes.names import MEMORY_TYPES
from indexer.protocol import Job, Writer
from indexer.retrieval.query import make_query
from indexer.retrieval.search import search_within
from indexer.store_jobs import LOCAL_JOBS, STORE_JOBS, store_status


class Memory:
    """Long-term memory over the global and project Markdown stores.

    >>> mem = Memory(home="~/.mdmem", project=".")
    >>> mem.index()
    >>> for hit in mem.search("what did we decide about backups"):
    ...     print(hit.uri, hit.start_line, hit.content)
    """

    def __init__(self, home: str | Path | None = None, project: str | Path | None = None, *,
                 cfg: Config | None = None, embedder=None, warn=None, available=None, writer=None,
                 read_only: bool = False, kept: KeptCopies | None = None, rankers: Rankers | None = None,
                 **settings):
        self.cfg = cfg or config_mod.load(home=Path(home) if home else None,
                                          project=Path(project) if project else None, **settings)
        self._embedder = embedder
        self._stores: dict[str, Store] = {}
        self._warn = warn or (lambda message: None)
        # the daemon's readers skip a store whose root is gone (no hits) instead of creating it again
        self._available = available or (lambda name: True)
        # a daemon's reader opens read-only connections and hands every write to the store's writer
        self._read_only = read_only
        self.writer: Writer = writer or LocalWriter(self)
        # copies of the index kept in memory: a serving process hands its own; one made here keeps none
        self._own_kept = kept is None
        self.kept = kept if kept is not None else KeptCopies()
        # the configured ranking models, loaded once by their holder: a serving process hands its own
        self.rankers = rankers if rankers is not None else Rankers()
        self.gone = None  # set by a server for one request: once it returns True a search stops at its next stage

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            self._embedder = load_embedder(self.cfg, fallback=True, warn=self._warn)
        return self._embedder

    def fetch_models(self) -> None:
        """Load the embedder for a build: a named sentence-transformers model missing from the Hugging Face cache
        is downloaded now (with progress), never by a search."""
        if self._embedder is None:
            self._embedder = load_embedder(self.cfg, fallback=True, warn=self._warn, download=True)

    def stores(self, scope: str = "all") -> list[Store]:
        scope = validation.scope(scope)
        out = []
        for name, root in store_roots(self.cfg, scope):
            if not self._available(name):
                continue
            if name not in self._stores:
                self._stores[name] = open_store(name, root, self.embedder, follow_symlinks=self.cfg.follow_symlinks,
                                                read_only=self._read_only, warn=self._warn, kept=self.kept,
                                                rankers=self.rankers)
            out.append(self._stores[name])
        return out

    def _spaces(self, space: str | None, more) -> tuple[str, ...]:
        """The spaces one ranking covers: space and more ("" or None: the notes outside every space); () when
        more is None (the search reads `space` alone)."""
        more = validation.spaces(more)
        if more is None:
            return ()
        named = [space or ""] if space is not None else []
        return tuple(dict.fromkeys(named + [self._space(s) or "" for s in more]))

    def _space(self, space: str | None) -> str | None:
        """A space name as its folder is spelled (Alice and alice are one space), or InputError."""
        from indexer.notes.spaces import as_stored
        return as_stored(space, [root for _name, root in store_roots(self.cfg, "all")])

    def close_store(self, name: str) -> None:
        """Close this memory's connections to one store (its file is about to be replaced)."""
        st = self._stores.pop(name, None)
        if st is not None:
            st.close()

    def close(self) -> None:
        for st in self._stores.values():
            st.close()
        self._stores.clear()
        if self._own_kept:
            self.kept.drop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- operations --------------------------------------------------------------------------
    def index(self, scope: str = "all", progress=None) -> list[SyncReport]:
        """Incremental sync: new, changed and deleted files only."""
        return self.writer.index(validation.scope(scope), progress)

    def rebuild(self, scope: str = "all", no_cache: bool = False, progress=None) -> list[SyncReport]:
        """Recreate the index from the Markdown and swap it in atomically."""
        return self.writer.rebuild(validation.scope(scope), no_cache, progress)

    def search(self, query: str, mode: str | None = None, scope: str = "all", limit: int | None = None,
               under=(), min_score: float | None = None, explain: bool = False, bump: bool = True,
               space: str | None = None, since=None, until=None, now=None, spaces: list[str] | None = None) -> list[Hit]:
        """One merged ranking over the chosen stores; every returned hit counts as an access.
        since/until ("2026-03-01", "7d", "2w", "3m") keep memories dated within them; time words in the
        query (上周, last week) name a window relative to `now` (a day; default: today). spaces: more spaces
        in the same ranking as `space` ("" = the notes outside every space)."""
        from indexer.retrieval import timewindow
        query = validation.question(query, self.cfg.max_query_chars)  # its time words are read from what is searched
        return self._search(query, timewindow.window_for(query, now, self.cfg), mode=mode, scope=scope, limit=limit,
                            under=under, min_score=min_score, explain=explain, bump=bump, space=self._space(space),
                            since=since, until=until, now=now, spaces=self._spaces(self._space(space), spaces))

    def _search(self, query: str, window, *, scope: str, bump: bool, now, made=None, **args) -> list[Hit]:
        """search() within the window given (recall keeps its question's window when it adds context); made: the
        question's vectors by text, filled for the caller (search.search_within)."""
        q = make_query(self.cfg, query, now=now, gone=self.gone, **args)
        hits = search_within(self.stores(scope), self.embedder, self.cfg, q, window, made)
        if hits and hits[0].signals.get("ranker_error"):  # said, never raised: the first stage still answered
            self._warn(f"ranked without the ranking model: {hits[0].signals['ranker_error']}")
        if bump:
            self.writer.record_access(hits)
        return hits

    def stats(self, scope: str = "all") -> dict:
        out = {}
        for st in self.stores(scope):
            s = sql.get_stats(st.con)
            s.update(root=str(st.root), index=str(st.index_path), embedder=sql.read_meta(st.con).get("embedder"))
            out[st.name] = s
        return out

    # -- the index's upkeep: status, decay and cleanup passes ------------------------------------------
    def status(self, scope: str = "all") -> dict:
        """Per store: files, chunks, last sync, and whether the index lags the notes."""
        return self.writer.status(validation.scope(scope))

    def decay(self, scope: str = "all") -> list[dict]:
        """Recompute every chunk's strength now (what the daemon's hourly pass does)."""
        return self.writer.decay(validation.scope(scope))

    def cleanup(self, scope: str = "all") -> list[dict]:
        """Drop rows of vanished files and orphans, optimise FTS, checkpoint the WAL."""
        return self.writer.cleanup(validation.scope(scope))

    # -- agents: write and recall (memories/add.py, retrieval/recall.py) ------------------------------
    def add(self, text: str, type: str = "fact", importance: int | None = None, scope: str | None = None,
            file: str | None = None, redact: bool = False, space: str | None = None,
            supersedes: str | None = None) -> dict:
        """Write one memory to its Markdown note (or reinforce its twin) and index it at once.

        Returns {"action": "appended"|"reinforced", "id", "uri", "start_line", "end_line", "store", ...}, and
        "superseded" when it gave a new value for a stored fact (or for the `supersedes` id), now struck through;
        "decision" when it decided on its own (logged, undoable, maybe queued: docs/REVIEW.md).
        Text holding a secret is refused (InputError) unless redact=True.
        """
        from indexer.memories.add import add_memory
        from indexer.memories.decisions import log_add
        from indexer.memories.supersede import add_superseding
        from indexer.notes.privacy import screen
        from indexer.providers import llm_review
        space = self._space(space)
        res = add_superseding(
            lambda dedupe: add_memory(text, cfg=self.cfg, stores=lambda: self.stores("all"), embedder=self.embedder,
                                      writes=self.writer, warn=self._warn, type_=type, importance=importance,
                                      scope=scope, file=file, redact=redact, space=space, dedupe=dedupe),
            lambda: self.stores("all"), self.embedder, text, type, space, supersedes, self.cfg.auto_supersede,
            lambda rid, new: self._update(rid, new, space, keep=False),  # the struck line stays in its note
            clock.today(self.cfg.timezone))
        args = {"type": type, "importance": importance, "scope": scope, "file": file, "space": space}
        judge = llm_review.judge(self.cfg)  # None without an LLM: a near memory then waits for review
        return log_add(res, screen(text.strip(), redact)[0], args, self.writer.log_decision, judge,
                       self._decision_ops() if judge else None)

    # -- decisions made at write, the review queue, consolidation (memories/decisions.py, consolidate.py) ------
    def review(self, action: str = "list", id: str | None = None, text: str | None = None,
               space: str | None = None, all: bool = False) -> dict:
        """The review queue (list; `all`: the whole decision log), or one decision accepted, rejected, undone or
        edited (the memory's text, or a proposed summary's, rewritten to text)."""
        from indexer.memories import decisions
        space = self._space(space)
        if action in ("list", "log"):
            return decisions.listing(self.stores("all"), space, all or action == "log")
        return decisions.resolve(action, id, text, self.stores("all"), space, self._decision_ops())

    def consolidate(self, now=None) -> dict:
        """Propose a summary of each week of journal memories older than consolidate_after_days (review queue)."""
        from indexer.memories.consolidate import propose
        from indexer.providers.llm_review import summariser
        from indexer.retrieval.timespan import today
        return propose(self.stores("all"), today(now, self.cfg.timezone), self.cfg.consolidate_after_days,
                       self.writer.log_decision, summariser(self.cfg))

    def _decision_ops(self):
        from indexer.memories import consolidate
        from indexer.memories.add import add_memory
        from indexer.memories.decisions import Ops
        from indexer.memories.supersede import mark_old

        def append(text: str, args: dict) -> dict:  # args: the add's own (type, importance, scope, file, space)
            return add_memory(text, cfg=self.cfg, stores=lambda: self.stores("all"), embedder=self.embedder,
                              writes=self.writer, warn=self._warn, type_=args.get("type") or "fact",
                              **{k: v for k, v in args.items() if k != "type"}, dedupe=False)

        def write_summary(store: str, entry: dict, text: str) -> dict:
            path, uri = consolidate.write_summary(self.stores(store)[0], entry, text)
            self.writer.index_notes(store, [path])
            return {"store": store, "uri": uri, "path": str(path)}
        def supersede(old_id: str, new_id: str, space: str | None) -> dict:
            return mark_old(self.stores("all"), old_id, new_id, space, clock.today(self.cfg.timezone),
                            lambda rid, new: self._update(rid, new, space, keep=False))
        return Ops(log=self.writer.log_decision, update=lambda i, t, s, keep: self._update(i, t, s, keep=keep),
                   forget=lambda i, s: self.forget(i, space=s), append=append, reinforce=self.writer.reinforce,
                   write_summary=write_summary, supersede=supersede, restore=lambda i, s: self.restore(i, space=s),
                   get=lambda i, s: self.get(i, space=s))

    def recall(self, query: str, context: str | None = None, limit: int | None = None,
               max_chars: int | None = None, scope: str = "all", space: str | None = None, since=None,
               until=None, now=None, spaces: list[str] | None = None, max_tokens: int | None = None) -> dict:
        """The prompt-ready block {"text", "memories", "tier", "query"}; empty text when nothing fits or the index is down.
        Time words in the query (上周, last week) name a window relative to `now`; the block says so.
        spaces: more spaces in the same ranking as `space` ("" = the notes outside every space); max_tokens: a
        budget in tokens (estimated as the chunker counts them) instead of, or besides, max_chars."""
        from indexer.notes.spaces import space_name
        from indexer.retrieval import hubness, opinion
        from indexer.retrieval.recall import on_topic, recall
        from indexer.retrieval.timespan import bounds
        from indexer.retrieval import timewindow
        space = self._space(space_name(space))  # a bad name is the caller's mistake, not an index that is down
        several = self._spaces(space, spaces)
        cut = validation.truncation(query, self.cfg.max_query_chars)
        if cut:  # a long conversation's question is its end: that is kept, also when context is put before it
            query = validation.question(query, self.cfg.max_query_chars, "end")
        window = timewindow.window_for(query, now, self.cfg)  # so is a bad `now`
        span = bounds(since, until, timewindow.timespan.today(now, self.cfg.timezone))  # a bad date: checked once
        deadline = time.monotonic() + self.cfg.search_timeout_s  # one for all its searches
        made: dict = {}  # the questions' vectors: the cut reads the question's e5 vector again (retrieval/gathering)

        def plain_search(text: str, in_scope: str, n: int) -> list[Hit]:
            return self._search(text, window, scope=in_scope, limit=n, bump=False, space=space, span=span, now=now,
                                keep="end", deadline=deadline, spaces=several, made=made)

        res = recall(query, cfg=self.cfg, search=plain_search, record_access=self.writer.record_access,
                     warn=self._warn, context=context, limit=limit, max_chars=max_chars, scope=scope,
                     dated=span != (None, None), max_tokens=max_tokens,
                     cut=functools.partial(on_topic, home=self.cfg.home, made=made),
                     vectors=lambda hits: hubness.vectors(self.stores(scope), hits),
                     names=tuple(n for n in (space, *several) if n),
                     second=(lambda hits, q: opinion.attach(hits, q, self.stores(scope), self.embedder, self.cfg.home))
                     if hubness.OPINION_SPREAD else None)
        return timewindow.tell_recall({**res, "query_truncated": cut} if cut else res, window)

    # -- agents: read back, correct and forget one memory (logic in memories/get.py and memories/edit.py) -------
    def get(self, ref: str, space: str | None = None, scope: str = "all") -> dict:
        """A memory by id, or a note's lines by `URI[:START[-END]]`, as the Markdown holds them now."""
        from indexer.memories.get import get_memory
        from indexer.memories.supersede import with_chain
        return with_chain(self.stores(scope), get_memory(self.stores(scope), ref, space=self._space(space)),
                          self._space(space))

    def history(self, id: str, space: str | None = None, scope: str = "all") -> dict:
        """A memory's versions, oldest first, from its note (struck-through lines) and the ids it had."""
        from indexer.memories.supersede import history
        return history(self.stores(scope), id, space=self._space(space))

    def recent(self, limit: int = 10, scope: str = "all", space: str | None = None, since=None, until=None,
               now=None, type: str | None = None, note: str | None = None) -> list[dict]:
        """The newest memories, newest first; since/until (days or ages from `now`) as search reads them; type and
        note (a part of the note's path) filter before the limit."""
        from indexer.memories.get import recent_records
        from indexer.retrieval.timespan import bounds, today
        span = bounds(since, until, today(now, self.cfg.timezone))
        type = validation.one_of("type", type, MEMORY_TYPES, 'type="fact"')
        note = validation.optional_text("note", note, 'note="user/preference.md"')
        return recent_records(self.stores(scope), limit, space=self._space(space), span=span, type=type, note=note)

    def spaces(self, scope: str = "all") -> list[dict]:
        """Every named space with memories: {"space", "store", "memories", "created_at", "updated_at"}."""
        return [{**row, "store": st.name} for st in self.stores(scope) for row in sql.memories_by_space(st.con)]

    def update(self, id: str, text: str, space: str | None = None, expected_hash: str | None = None,
               redact: bool = False) -> dict:
        """Replace a memory's text in its note (counters kept; the old text kept in the trash) and index it."""
        return self._update(id, text, space, expected_hash=expected_hash, redact=redact)

    def _update(self, memory_id: str, text: str, space: str | None, keep: bool = True, **args) -> dict:
        from indexer.memories.edit import update_memory
        return update_memory(memory_id, text, stores=self.stores("all"), writes=self.writer, warn=self._warn,
                             space=self._space(space), keep=keep, **args)

    def forget(self, id: str, space: str | None = None, expected_hash: str | None = None, purge: bool = False) -> dict:
        """Remove a memory's lines from its note and the index, kept in the trash (purge: removed everywhere)."""
        from indexer.memories.forget import forget_memory
        return forget_memory(id, stores=self.stores("all"), writes=self.writer, warn=self._warn, home=self.cfg.home,
                             space=self._space(space), expected_hash=expected_hash, purge=purge)

    def forget_matching(self, query: str, space: str | None = None, yes: bool = False,
                        limit: int | None = None, purge: bool = False) -> dict:
        """The memories whose text holds the query (removed only with yes=True) and those only similar (never)."""
        from indexer.memories.forget import forget_matching
        return forget_matching(query, stores=self.stores("all"), embedder=self.embedder, cfg=self.cfg,
                               writes=self.writer, warn=self._warn, space=self._space(space), yes=yes, limit=limit,
                               purge=purge)

    def restore(self, id: str, space: str | None = None) -> dict:
        """Put a forgotten (or corrected) memory back where it was, from the trash, and index it."""
        from indexer.memories.restore import restore_memory
        return restore_memory(id, stores=self.stores("all"), writes=self.writer, warn=self._warn,
                              space=self._space(space))

    def trash(self, space: str | None = None, scope: str = "all") -> dict:
        """What forget removed and update replaced, newest first, kept for `trash_days`."""
        from indexer.memories.restore import trash_list
        return trash_list(self.stores(scope), self.cfg.trash_days, space=self._space(space))

    def locate(self, id: str, scope: str = "all") -> str | None:
        """The space a memory id lives in (None: the default space); NotFoundError if none holds it."""
        from indexer.memories.locate import space_of_memory
        return space_of_memory(self.stores(scope), id)

    def import_notes(self, path: str, format: str | None = None, space: str | None = None, scope: str = "global",
                     dry_run: bool = False, progress=None, skip_bad: bool = False) -> dict:
        """Import SillyTavern chats, lorebooks, cards or a mem0 export; a second run adds nothing."""
        from dataclasses import asdict
        from indexer.memories.import_notes import import_path
        return asdict(import_path(path, self.cfg, fmt=format, space=self._space(space), scope=scope, dry_run=dry_run,
                                  skip_bad=skip_bad, index_notes=self.writer.index_notes, progress=progress,
                                  warn=self._warn))

    def verify(self, scope: str = "all", repair: bool = False) -> list[VerifyReport]:
        """Compare each store with its notes; with repair, re-index what differs and check again."""
        return self.writer.verify(validation.scope(scope), repair)


class LocalWriter(Writer):
    """The index writes done at once on this process's own connections (no daemon serves the stores)."""

    def __init__(self, mem: Memory):
        self.mem = mem

    def store(self, name: str) -> Store:
        return next(st for st in self.mem.stores(name) if st.name == name)

    def run(self, store: str, job: Job, payload=None):
        if job in LOCAL_JOBS:
            return LOCAL_JOBS[job](self, store, payload, None)
        return STORE_JOBS[job](self.store(store), payload, self.mem.cfg, self.mem._warn)

    def run_all(self, scope: str, job: Job, payload=None, progress=None) -> list:
        if job in LOCAL_JOBS:
            return [LOCAL_JOBS[job](self, name, payload, progress) for name, _root in store_roots(self.mem.cfg, scope)]
        return [self.run(name, job, payload) for name, _root in store_roots(self.mem.cfg, scope)]

    def status(self, scope: str) -> dict:
        """Per store: files, chunks, last sync, and whether the index lags the notes (a stat scan)."""
        from indexer.sync.passes import stale_files
        out = {}
        for st in self.mem.stores(scope):
            lagging = stale_files(st)
            out[st.name] = store_status(st.root, sql.status_counts(st.con), pending=lagging, stale=lagging > 0)
        return out

    def record_access(self, hits: list[Hit]) -> None:
        # only the stores that returned hits: counting never opens (or creates) a store the query left alone
        usage.tell_once([usage.count_access(self.store(name), ids)
                         for name, ids in usage.ids_by_store(hits).items()], self.mem._warn)

    def settle_counts(self, stores: list[str]) -> None:
        pass  # counted at once: nothing is waiting
