"""SQLite connections: apsw with sqlite-vec loaded and the mdmem FTS5 tokenizer registered."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import apsw
import apsw.fts5
import numpy as np
import sqlite_vec

from indexer.errors import CorruptIndexError, ExtensionError, StoreError
from indexer.notes.textseg import document_tokens, query_tokens

Error = apsw.Error
BusyError = apsw.BusyError
ConstraintError = apsw.ConstraintError
TOKENIZER_NAME = "mdmem"
BUSY_TIMEOUT_MS = 10_000


@apsw.fts5.StringTokenizer
def _tokenizer_factory(con, args, **kwargs):
    def tokenize(text: str, flags: int, locale):
        source = query_tokens if flags & apsw.FTS5_TOKENIZE_QUERY else document_tokens
        for start, end, toks in source(text):
            yield (start, end, *toks)

    return tokenize


def connect(path: Path | str, readonly: bool = False) -> apsw.Connection:
    """Open an index file ready for mdmem: extension, tokenizer, WAL, busy timeout."""
    path = str(path)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    new_file = not readonly and path != ":memory:" and not os.path.exists(path)
    if new_file:
        _create_private(path)
    try:
        con = apsw.Connection(path, flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreError(f"cannot open index {path}: {exc}; check the folder exists and is writable") from exc
    if new_file:
        os.chmod(path, 0o600)  # memories are private; SQLite gives -wal and -shm the same mode
    con.set_busy_timeout(BUSY_TIMEOUT_MS)
    _load_vec(con)
    try:
        _register_tokenizer(con)
        if not readonly:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        con.close()
        raise CorruptIndexError(f"index {path} is corrupt ({exc}); run `mdmem rebuild` to recreate it from the notes") from exc
    return con


def index_terms(con: apsw.Connection, text: str) -> list[tuple[str, str]]:
    """(surface word, indexed term) per query-style token of text, as the FTS index spells terms (stemmed)."""
    tok = con.fts5_tokenizer("porter", [TOKENIZER_NAME])
    raw = text.encode("utf-8")
    return [(raw[start:end].decode("utf-8", "replace"), term)
            for start, end, term, *_colocated in tok(raw, apsw.FTS5_TOKENIZE_QUERY, None)]


def _create_private(path: str) -> None:
    """Create the empty file 0600 before SQLite opens it, so it is never readable by others."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass  # another process created it first; it set the mode itself
    except OSError as exc:
        raise StoreError(f"cannot create index {path}: {exc.strerror}; check the folder exists and is writable") from exc


def _register_tokenizer(con: apsw.Connection) -> None:
    try:
        con.register_fts5_tokenizer(TOKENIZER_NAME, _tokenizer_factory)
    except apsw.NoFTS5Error as exc:
        # the FTS5 API is fetched through the file: a corrupt file fails here too
        probe = apsw.Connection(":memory:")
        try:
            probe.register_fts5_tokenizer(TOKENIZER_NAME, _tokenizer_factory)
        except apsw.NoFTS5Error:
            raise ExtensionError("this SQLite has no FTS5; reinstall with `pip install --force-reinstall apsw`") from exc
        finally:
            probe.close()
        raise apsw.NotADBError(str(exc)) from exc


def _load_vec(con: apsw.Connection) -> None:
    try:
        con.enable_load_extension(True)
        con.load_extension(sqlite_vec.loadable_path())
        con.enable_load_extension(False)
    except apsw.Error as exc:
        raise ExtensionError(
            f"cannot load the sqlite-vec extension ({exc}); reinstall with `pip install --force-reinstall sqlite-vec apsw`"
        ) from exc


def sqlite_version() -> str:
    return apsw.sqlite_lib_version()


def fts5_available(con: apsw.Connection) -> bool:
    try:
        con.execute("CREATE VIRTUAL TABLE temp._probe USING fts5(x)")
        con.execute("DROP TABLE temp._probe")
        return True
    except apsw.Error:
        return False


@contextlib.contextmanager
def transaction(con: apsw.Connection):
    """BEGIN IMMEDIATE so writers queue on the busy timeout instead of failing mid-way."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


@contextlib.contextmanager
def rolled_back(con: apsw.Connection):
    """A write transaction that is always rolled back (FTS5's integrity-check is an INSERT)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    finally:
        con.execute("ROLLBACK")


def backup_into(dest: apsw.Connection, source: apsw.Connection) -> None:
    """Replace dest's whole content with source's in one atomic step (readers keep their snapshot)."""
    with dest.backup("main", source, "main") as b:
        while not b.done:
            b.step(-1)


def rows(con: apsw.Connection, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    try:
        names = [d[0] for d in cur.get_description()]
    except apsw.ExecutionCompleteError:
        return []
    return [dict(zip(names, r)) for r in cur]


def vector_blob(vec) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, (apsw.CorruptError, apsw.NotADBError))


def quick_check(con: apsw.Connection) -> list[str]:
    return [r[0] for r in con.execute("PRAGMA integrity_check")]
