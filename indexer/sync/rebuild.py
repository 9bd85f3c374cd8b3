"""Rebuild a store's index from its Markdown into a new file, then swap it in atomically."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from indexer.index import db
from indexer.index import sql
from indexer.config import Config
from indexer.errors import (AccessDeniedError, CorruptIndexError, DiskFullError, MdmemError, ReadOnlyStoreError,
                            StoreError)
from indexer.index.stores import Store, open_store
from indexer.models import SyncReport
from indexer.private_files import make_private_dirs
from indexer.sync import ranking_vectors
from indexer.sync.store_sync import sync_store


def rebuild_store(name: str, root: Path, embedder, cfg: Config, no_cache: bool = False,
                  progress=None, warn=None) -> SyncReport:
    """Index every note into a shadow file; readers of the live index see the old one until the swap.

    Vectors of unchanged text are reused from the live index when it was built by the same
    model (unless no_cache), and access / reinforcement counters are carried over.
    """
    root = Path(root)
    make_private_dirs(root)
    live_path = root / "index.db"
    shadow_path = root / f"index.db.rebuild-{os.getpid()}"
    resumed = {} if no_cache else _killed_rebuilds_vectors(root, embedder.model_id)
    _remove_stale_shadows(root)
    _remove_db_files(shadow_path)
    cache, saved, aliases, e5_old = {}, [], [], {}
    live = _open_live(live_path)
    if live is not None:
        try:
            meta = sql.read_meta(live)
            if not no_cache and meta.get("embedder") == embedder.model_id:
                cache = sql.vectors_by_hash(live)
            saved = sql.counters_by_uri_hash(live)
            aliases = sql.all_aliases(live)
            e5_old = ranking_vectors.old_vectors(live, no_cache)
        except MdmemError:
            cache, saved, aliases = {}, [], []  # an unreadable old index only costs re-embedding
    cache = {**resumed, **cache}
    shadow = open_store(name, root, embedder, index_path=shadow_path, follow_symlinks=cfg.follow_symlinks)
    try:
        ranking_vectors.carry(shadow, e5_old)
        report = sync_store(shadow, embedder, cfg, progress=progress, warn=warn, reinforce=False, cache=cache)
        with db.transaction(shadow.con):
            sql.delete_orphan_e5(shadow.con)
            sql.restore_counters(shadow.con, saved)
            sql.restore_aliases(shadow.con, aliases)
        sql.wal_checkpoint(shadow.con)
        swap_shadow_in(shadow, live, live_path)
    finally:
        shadow.close()
        if live is not None:
            live.close()
        _remove_db_files(shadow_path)
    return report


def _open_live(path: Path):
    """The index being replaced, or None when it is missing or damaged (then it is kept aside)."""
    if not path.exists():
        return None
    try:
        con = db.connect(path)
    except CorruptIndexError:
        return None
    try:
        if db.quick_check(con) == ["ok"]:
            sql.read_meta(con)
            return con
    except CorruptIndexError:
        pass
    con.close()
    return None


def swap_shadow_in(shadow: Store, live, live_path: Path) -> None:
    if live is not None:
        try:
            db.backup_into(live, shadow.con)  # page copy under the write lock: readers never see half
            return
        except CorruptIndexError:
            pass
        except (DiskFullError, ReadOnlyStoreError, AccessDeniedError):
            raise
        except StoreError as exc:
            raise StoreError(f"cannot replace {live_path} ({exc}); stop other mdmem writers and retry `mdmem rebuild`") from exc
    # no usable live index (missing or corrupt): keep the broken one aside and move the new file in
    if live_path.exists():
        aside = live_path.with_name(f"index.db.corrupt-{int(time.time())}")
        os.replace(live_path, aside)
    for suffix in ("-wal", "-shm"):
        Path(str(live_path) + suffix).unlink(missing_ok=True)
    fresh = db.connect(live_path)
    try:
        db.backup_into(fresh, shadow.con)
    finally:
        fresh.close()


def _killed_rebuilds_vectors(root: Path, model_id: str) -> dict:
    """The vectors a killed rebuild with this model had already written (every 32 notes): a rebuild that
    re-embeds a store through a paid or slow provider resumes where it was killed instead of starting over."""
    out = {}
    for path in root.glob("index.db.rebuild-*"):
        match = re.fullmatch(r"index\.db\.rebuild-(\d+)", path.name)
        if not match or _alive(int(match.group(1))):
            continue
        try:
            con = db.connect(path)
        except MdmemError:
            continue
        try:
            if sql.read_meta(con).get("embedder") == model_id:
                out.update(sql.vectors_by_hash(con))
        except Exception:  # a shadow killed before its schema was written: nothing to take
            pass
        finally:
            con.close()
    return out


def _remove_stale_shadows(root: Path) -> None:
    """Shadow files of rebuilds that were killed would otherwise pile up, one per dead process."""
    for path in root.glob("index.db.rebuild-*"):
        match = re.fullmatch(r"index\.db\.rebuild-(\d+)", path.name)
        if match and not _alive(int(match.group(1))):
            _remove_db_files(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _remove_db_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)
