"""The global and project stores: where each lives, opened with its index and identity checked."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from indexer.index import db
from indexer.index import sql
from indexer.index.released_rows import Released
from indexer.notes.chunker import CHUNKER_VERSION
from indexer.config import Config
from indexer.errors import for_os_error
from indexer.private_files import make_private_dirs
from indexer.notes.scanner import NoteFilter
from indexer.notes.textseg import TOKENIZER_VERSION


@dataclass
class Store:
    """One Markdown root and its open index connection, with what this process keeps of it between calls."""

    name: str  # "global" or "project"
    root: Path
    con: object
    with_vec: bool
    filter: NoteFilter = field(repr=False)
    # rows removed lately, whose counters and vectors go to a copy that reappears (sync/continuity)
    released: Released = field(default_factory=Released, repr=False)
    # accesses not written yet (a busy writer, a full disk): counted with the next write that works
    unwritten: Counter = field(default_factory=Counter, repr=False)
    failure_told: bool = field(default=False, repr=False)  # a failed count is told once until one works
    # the copies kept beside the index file (kept.KeptCopies: the daemon's, shared by its stores), or None
    kept: object = field(default=None, repr=False)
    # the ranking models its searches use (providers.rankers.Rankers: the Memory's, or the daemon's), or None
    rankers: object = field(default=None, repr=False)

    @property
    def index_path(self) -> Path:
        return self.root / "index.db"

    @property
    def readonly(self) -> bool:
        return db.is_readonly(self.con)

    def close(self) -> None:
        self.con.close()


def identity(path: Path, folder: bool = False) -> tuple[int, int] | None:
    """(device, inode) of what the path names now (links followed); None when absent or not a folder
    where one is wanted. A root or index file that was deleted and created again gets a new one."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if folder and not stat.S_ISDIR(st.st_mode):
        return None
    return st.st_dev, st.st_ino


def store_roots(cfg: Config, scope: str = "all") -> list[tuple[str, Path]]:
    roots = []
    if scope in ("all", "global"):
        roots.append(("global", cfg.home))
    if scope in ("all", "project") and cfg.project is not None:
        roots.append(("project", cfg.project))
    return roots


def open_store(name: str, root: Path, embedder, index_path: Path | None = None,
               follow_symlinks: bool = False, read_only: bool = False, warn=None, kept=None, rankers=None) -> Store:
    """Open (creating if needed) a store's index and bind it to the embedder's identity.

    read_only: a reader's connection (the daemon's request threads): it cannot write, so every
    change goes through the store's writer; the index must exist already. An index this process
    cannot write opens read-only too: searches answer, writes say why not.
    """
    root = Path(root)
    if not read_only and not root.is_dir():
        try:
            make_private_dirs(root)
        except OSError as exc:
            raise for_os_error(exc, root) from exc
    con = db.connect(index_path or root / "index.db", readonly=read_only, warn=warn)
    try:
        if db.is_readonly(con) and sql.has_schema(con):
            with_vec = sql.check_identity(con, embedder.model_id, embedder.dim, CHUNKER_VERSION, TOKENIZER_VERSION)
        else:
            sql.init_schema(con)
            with_vec = sql.bind_identity(con, embedder.model_id, embedder.dim, CHUNKER_VERSION, TOKENIZER_VERSION,
                                         identity=_identity(embedder))
    except BaseException:
        con.close()
        raise
    return Store(name=name, root=root, con=con, with_vec=with_vec, filter=NoteFilter(root, follow_symlinks), kept=kept,
                 rankers=rankers)


def _identity(embedder) -> str:
    """What made a store's vectors, kept in its meta: provider, model, dimensions, prompts (never a URL or key)."""
    ident = getattr(embedder, "identity", None)
    if not isinstance(ident, dict):
        ident = {"provider": sql.provider_of(embedder.model_id), "model": embedder.model_id,
                 "dimensions": embedder.dim, "prompts": ""}
    return json.dumps(ident, ensure_ascii=False, sort_keys=True)
