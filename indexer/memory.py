"""The library face of mdmem: `Memory` opens the stores once and serves index, search and stats."""

from __future__ import annotations

from pathlib import Path

from indexer import config as config_mod
from indexer import validation
from indexer.index import sql
from indexer.config import Config
from indexer.embedder import load_embedder
from indexer.models import Hit
from indexer.ops.rebuild import rebuild_store
from indexer.ops.search import make_query, search
from indexer.index.stores import Store, open_store, store_roots
from indexer.ops.sync import SyncReport, sync_store


class Memory:
    """Long-term memory over the global and project Markdown stores.

    >>> mem = Memory(home="~/.mdmem", project=".")
    >>> mem.index()
    >>> for hit in mem.search("what did we decide about backups"):
    ...     print(hit.uri, hit.start_line, hit.content)
    """

    def __init__(self, home: str | Path | None = None, project: str | Path | None = None, *,
                 cfg: Config | None = None, embedder=None, warn=None, available=None, **settings):
        self.cfg = cfg or config_mod.load(home=Path(home) if home else None,
                                          project=Path(project) if project else None, **settings)
        self._embedder = embedder
        self._stores: dict[str, Store] = {}
        self._warn = warn or (lambda message: None)
        # the daemon's readers skip a store whose root is gone (no hits) instead of creating it again
        self._available = available or (lambda name: True)

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            self._embedder = load_embedder(self.cfg, fallback=True, warn=self._warn)
        return self._embedder

    def stores(self, scope: str = "all") -> list[Store]:
        scope = validation.scope(scope)
        out = []
        for name, root in store_roots(self.cfg, scope):
            if not self._available(name):
                continue
            if name not in self._stores:
                self._stores[name] = open_store(name, root, self.embedder, follow_symlinks=self.cfg.follow_symlinks)
            out.append(self._stores[name])
        return out

    def close(self) -> None:
        for st in self._stores.values():
            st.close()
        self._stores.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- operations --------------------------------------------------------------------------
    def index(self, scope: str = "all", progress=None) -> list[SyncReport]:
        """Incremental sync: new, changed and deleted files only."""
        return [sync_store(st, self.embedder, self.cfg, progress=progress, warn=self._warn)
                for st in self.stores(scope)]

    def rebuild(self, scope: str = "all", no_cache: bool = False, progress=None) -> list[SyncReport]:
        """Recreate the index from the Markdown and swap it in atomically."""
        reports = []
        for name, root in store_roots(self.cfg, scope):
            st = self._stores.pop(name, None)
            if st is not None:
                st.close()
            reports.append(rebuild_store(name, root, self.embedder, self.cfg, no_cache=no_cache,
                                         progress=progress, warn=self._warn))
        return reports

    def search(self, query: str, mode: str | None = None, scope: str = "all", limit: int | None = None,
               under=(), min_score: float | None = None, explain: bool = False, bump: bool = True) -> list[Hit]:
        """One merged ranking over the chosen stores; every returned hit counts as an access."""
        q = make_query(self.cfg, query, mode=mode, limit=limit, under=under, min_score=min_score, explain=explain)
        return search(self.stores(scope), self.embedder, self.cfg, q, bump=bump)

    def stats(self, scope: str = "all") -> dict:
        out = {}
        for st in self.stores(scope):
            s = sql.get_stats(st.con)
            s.update(root=str(st.root), index=str(st.index_path), embedder=sql.read_meta(st.con).get("embedder"))
            out[st.name] = s
        return out

    # -- daemon-era operations: status, decay and cleanup passes ------------------------------------
    def status(self, scope: str = "all") -> dict:
        """Per store: files, chunks, last sync, and whether the index lags the notes (stat scan)."""
        from indexer.ops.passes import stale_files
        out = {}
        for st in self.stores(scope):
            s = sql.get_stats(st.con)
            lagging = stale_files(st)
            out[st.name] = {"root": str(st.root), "files": s["documents"], "chunks": s["chunks"],
                            "vectors": s["vectors"], "pending": lagging, "busy": None,
                            "last_sync": s["last_indexed_at"], "stale": lagging > 0, "daemon": False}
        return out

    def decay(self, scope: str = "all") -> list[dict]:
        """Recompute every chunk's strength now (what the daemon's hourly pass does)."""
        from indexer.ops.passes import decay_store
        return [decay_store(st, self.cfg) for st in self.stores(scope)]

    def cleanup(self, scope: str = "all") -> list[dict]:
        """Drop rows of vanished files and orphans, optimise FTS, checkpoint the WAL."""
        from indexer.ops.passes import cleanup_store
        return [cleanup_store(st) for st in self.stores(scope)]

    # -- agents: write and recall (logic in adder.py / recall.py) -----------------------------
    def add(self, text: str, type: str = "fact", importance: int | None = None, scope: str | None = None,
            file: str | None = None, redact: bool = False) -> dict:
        """Write one memory to its Markdown note (or reinforce its twin) and index it at once.

        Returns {"action": "appended"|"reinforced", "uri", "start_line", "end_line", "store", ...}.
        Text holding a secret is refused (InputError) unless redact=True.
        """
        from indexer.ops.add import add_memory
        return add_memory(self, text, type_=type, importance=importance, scope=scope, file=file, redact=redact)

    def recall(self, query: str, context: str | None = None, limit: int | None = None,
               max_chars: int | None = None, scope: str = "all") -> dict:
        """The prompt-ready block {"text", "memories", "tier", "query"}; empty text when nothing fits or the index is down."""
        from indexer.ops.recall import recall
        return recall(self, query, context=context, limit=limit, max_chars=max_chars, scope=scope)

    # -- verification (reliability) ----------------------------------------------------------
    def verify(self, scope: str = "all", repair: bool = False) -> list:
        """Compare each store with its notes; with repair, re-index what differs and check again."""
        from indexer.errors import CorruptIndexError
        from indexer.ops.verify import damaged, needs_rebuild, repair_store, verify_store
        reports = []
        for name, _root in store_roots(self.cfg, scope):
            try:
                st = self.stores(name)[0]
                rep = verify_store(st, self.cfg, self.embedder)
            except CorruptIndexError as exc:
                rep = damaged(name, exc)
                if not repair:
                    reports.append(rep)
                    continue
            if repair and not rep.ok:
                if needs_rebuild(rep):
                    self.rebuild(scope=name)
                    done = ["rebuilt the whole index from the notes"]
                    st = self.stores(name)[0]
                else:
                    done = repair_store(st, self.cfg, self.embedder, rep, warn=self._warn)
                found = rep.found
                rep = verify_store(st, self.cfg, self.embedder)
                rep.repaired, rep.found = done, found
            reports.append(rep)
        return reports
