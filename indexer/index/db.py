"""SQLite connections: apsw with sqlite-vec loaded and the mdmem FTS5 tokenizer registered."""

from __future__ import annotations

import contextlib
import errno
import os
import time
from pathlib import Path
from urllib.parse import quote

import apsw
import apsw._unicode
import numpy as np
import sqlite_vec

from indexer.errors import (AccessDeniedError, CorruptIndexError, DiskFullError, ExtensionError, MdmemError,
                            ReadOnlyStoreError, StoreBusyError, StoreError, for_errno, for_os_error, read_only)
from indexer.notes.textseg import document_tokens, query_tokens

TOKENIZER_NAME = "mdmem"
BUSY_TIMEOUT_MS = 10_000
WRITER_CACHE_KB = 16_384  # a writer's page cache: room for vec0's blob being filled and the tables' hot pages


def _tokenizer_factory(con, args, **kwargs):
    def tokenize(utf8: bytes, flags: int, locale):
        source = query_tokens if flags & apsw.FTS5_TOKENIZE_QUERY else document_tokens
        if utf8.isascii():  # most notes: character offsets are the byte offsets FTS5 wants
            return [(start, end, *toks) for start, end, toks in source(utf8.decode("ascii"))]
        byte_of = apsw._unicode.to_utf8_position_mapper(utf8)
        return [(byte_of(start), byte_of(end), *toks) for start, end, toks in source(byte_of.str)]

    return tokenize


class Connection(apsw.Connection):
    """An apsw connection whose statements report faults as mdmem errors naming the index file."""

    def execute(self, statements, bindings=None, **kwargs):
        try:
            return super().execute(statements, bindings, **kwargs)
        except apsw.Error as exc:
            raise translate(exc, self) from exc

    def executemany(self, statements, sequenceofbindings, **kwargs):
        try:
            return super().executemany(statements, sequenceofbindings, **kwargs)
        except apsw.Error as exc:
            raise translate(exc, self) from exc


def connect(path: Path | str, readonly: bool = False, warn=None) -> Connection:
    """Open an index file ready for mdmem: extension, tokenizer, WAL, busy timeout.

    An index this process cannot write (read-only mount, no permission, no space for the WAL's
    files) is opened read-only, so searches still answer; writes then fail naming the cause.
    """
    path = str(path)
    why = None
    if not readonly and path != ":memory:" and os.path.exists(path) and not writable(path):
        why = _unwritable(path)
    if readonly or why:
        con = _open_readonly(path, warn)
    else:
        con, why = _open_writable(path, warn)
    con.unwritable = why
    try:
        con.set_busy_timeout(BUSY_TIMEOUT_MS)
        _load_vec(con)
        _register_tokenizer(con)
        if not con.readonly("main"):
            _use_wal(con)
            con.execute("PRAGMA synchronous=NORMAL")
            # vec0 writes each new vector by walking its blob's page chain (2 MB in stores made with 1,024
            # vectors a blob, 512 KB with 256): with SQLite's 2 MB default cache the chain is read again each time
            con.execute(f"PRAGMA cache_size={-WRITER_CACHE_KB}")
    except BaseException:
        con.close()
        raise
    return con


def _use_wal(con: Connection) -> None:
    """Switch a file to WAL, waiting like any writer while another process holds its write lock.

    SQLite answers a journal-mode change SQLITE_BUSY at once, without the busy handler, while
    another connection writes in rollback mode: two processes opening a new index would fail.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except StoreBusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def _open_writable(path: str, warn=None) -> tuple[Connection, MdmemError | None]:
    """A read-write connection, or a read-only one and the reason when the WAL cannot be set up."""
    new_file = path != ":memory:" and not os.path.exists(path)
    if new_file:
        _create_private(path)
    con = _open(path, apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
    if new_file:
        os.chmod(path, 0o600)  # memories are private; SQLite gives -wal and -shm the same mode
    try:
        con.set_busy_timeout(BUSY_TIMEOUT_MS)
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()  # an unreadable file fails here, named
        return con, None
    except (DiskFullError, ReadOnlyStoreError, AccessDeniedError) as exc:
        con.close()
        if new_file:
            raise
        return _open_readonly(path, warn), exc  # reading needs no space: answer from what is there
    except BaseException:
        con.close()
        raise


def writable(path: str) -> bool:
    """Whether this process may write the index file and create its -wal and -shm beside it."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


def _unwritable(path: str) -> MdmemError:
    try:
        mounted_ro = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        mounted_ro = False
    return for_os_error(OSError(errno.EROFS if mounted_ro else errno.EACCES, ""), path)


def is_readonly(con: Connection) -> bool:
    return con.readonly("main")


def write_refusal(con: Connection) -> MdmemError:
    """Why this connection cannot write: what made it open read-only, else plain read-only."""
    return getattr(con, "unwritable", None) or read_only(con.filename)


def _open(uri: str, flags: int) -> Connection:
    try:
        return Connection(uri, flags=flags)
    except apsw.Error as exc:
        raise translate(exc, path=uri.removeprefix("file:").split("?")[0]) from exc


def _open_readonly(path: str, warn=None) -> Connection:
    """Read-only open; where SQLite cannot even read the WAL's index (-shm absent, folder read-only),
    the immutable mode reads the main file alone, without what the WAL holds."""
    con = _open(path, apsw.SQLITE_OPEN_READONLY)
    con.set_busy_timeout(BUSY_TIMEOUT_MS)
    try:
        apsw.Connection.execute(con, "SELECT count(*) FROM sqlite_master").fetchall()
        return con
    except (apsw.BusyError, apsw.LockedError, apsw.CorruptError, apsw.NotADBError) as exc:
        err = translate(exc, con)  # busy or damaged: the immutable mode would only hide it
        con.close()
        raise err from exc
    except apsw.Error:
        con.close()  # the WAL's files cannot be opened or made here
    con = _open(f"file:{quote(path)}?immutable=1", apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    wal = path + "-wal"
    if warn and os.path.exists(wal) and os.path.getsize(wal) > 0:
        warn(f"read-only: {path} is read without {wal}; changes since its last checkpoint are not visible")
    return con


@contextlib.contextmanager
def guard(con: Connection | None = None, path: str | None = None):
    """Turn a binding error raised inside into the mdmem error that names its cause and the file."""
    try:
        yield
    except apsw.Error as exc:
        raise translate(exc, con, path) from exc


def translate(exc: apsw.Error, con: Connection | None = None, path: str | None = None) -> MdmemError:
    """The mdmem error for a binding error: disk full, read-only, denied, busy, damaged (only when
    an integrity check agrees) or, failing those, what SQLite said."""
    path = path or (con.filename if con is not None else "") or "index"
    if isinstance(exc, apsw.FullError):
        return DiskFullError(f"disk full: {path} (free some space; nothing was written)")
    code = _system_errno(con)
    known = for_errno(code, path) if code else None
    if known is not None:
        return known
    if isinstance(exc, apsw.ReadOnlyError):
        return write_refusal(con) if con is not None else read_only(path)
    if isinstance(exc, (apsw.PermissionsError, apsw.AuthError)):
        return AccessDeniedError(f"permission denied: {path} (give this user access to the file and its folder)")
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return StoreBusyError(f"index busy: {path} (another mdmem process holds the write lock; try again)")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)) and _confirmed_corrupt(con):
        return CorruptIndexError(f"index {path} is corrupt ({exc}); run `mdmem rebuild` to recreate it from the notes")
    if isinstance(exc, apsw.CantOpenError):
        return StoreError(f"cannot open index {path}: {exc}; check the folder exists and is readable")
    return StoreError(f"index {path}: {exc} ({type(exc).__name__}); run `mdmem verify` to check it")


def _system_errno(con: Connection | None) -> int:
    try:
        return con.system_errno if con is not None else 0
    except apsw.Error:
        return 0


def _confirmed_corrupt(con: Connection | None) -> bool:
    """SQLite's own integrity check, the only judge of damage (a page SQLite cannot read is damage too)."""
    if con is None:
        return True  # the header could not be read at all: not an SQLite file
    try:  # the binding's own execute: a failure here must not be translated again
        return apsw.Connection.execute(con, "PRAGMA quick_check").fetchall() != [("ok",)]
    except (apsw.CorruptError, apsw.NotADBError):
        return True
    except apsw.Error:
        return False


def index_terms(con: Connection, text: str) -> list[tuple[str, str]]:
    """(surface word, indexed term) per query-style token of text, as the FTS index spells terms (stemmed)."""
    tok = con.fts5_tokenizer("porter", [TOKENIZER_NAME])
    raw = text.encode("utf-8")
    return [(raw[start:end].decode("utf-8", "replace"), term)
            for start, end, term, *_colocated in tok(raw, apsw.FTS5_TOKENIZE_QUERY, None)]


def stored_terms(con: Connection, text: str) -> list[tuple[str, ...]]:
    """The terms at each position of a document's text as the FTS index stores them (stemmed; a Chinese
    word's sub-words and characters at its own position)."""
    tok = con.fts5_tokenizer("porter", [TOKENIZER_NAME])
    return [tuple(dict.fromkeys(terms)) for _start, _end, *terms in
            tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None)]


def _create_private(path: str) -> None:
    """Create the empty file 0600 before SQLite opens it, so it is never readable by others."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass  # another process created it first; it set the mode itself
    except OSError as exc:
        raise for_os_error(exc, path) from exc


def _register_tokenizer(con: Connection) -> None:
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
        raise StoreError(f"cannot read index {con.filename}: {exc}; run `mdmem verify` to check it") from exc


def _load_vec(con: Connection) -> None:
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


def fts5_available(con: Connection) -> bool:
    try:
        con.execute("CREATE VIRTUAL TABLE temp._probe USING fts5(x)")
        con.execute("DROP TABLE temp._probe")
        return True
    except (apsw.Error, MdmemError):
        return False


@contextlib.contextmanager
def transaction(con: Connection):
    """BEGIN IMMEDIATE so writers queue on the busy timeout instead of failing mid-way."""
    if con.readonly("main"):
        raise write_refusal(con)
    con.execute("BEGIN IMMEDIATE")
    try:
        with guard(con):
            yield con
        con.execute("COMMIT")
    except BaseException:
        # SQLite itself rolls back on a full disk or I/O error; the first error is the one to report
        if con.in_transaction:
            with contextlib.suppress(MdmemError):
                con.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def read_snapshot(con: Connection):
    """One read transaction over several statements: they all see the same committed state."""
    con.execute("BEGIN")
    try:
        with guard(con):
            yield con
    finally:
        if con.in_transaction:
            with contextlib.suppress(MdmemError):
                con.execute("COMMIT")


@contextlib.contextmanager
def rolled_back(con: Connection):
    """A write transaction that is always rolled back (FTS5's integrity-check is an INSERT)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        with guard(con):
            yield con
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")


def backup_into(dest: Connection, source: Connection) -> None:
    """Replace dest's whole content with source's in one atomic step (readers keep their snapshot)."""
    with guard(dest), dest.backup("main", source, "main") as b:
        while not b.done:
            b.step(-1)


MEMO_LIMIT = 50_000


def memo(con: Connection, version, slot: str = "text") -> dict:
    """A dict kept on the connection while `version` stays the same (the caller's name for the state
    of what it caches); a new version starts an empty one. Each slot keeps its own."""
    slots = getattr(con, "memo_state", None)
    if slots is None:
        slots = con.memo_state = {}
    kept = slots.get(slot)
    if kept is None or kept[0] != version or len(kept[1]) > MEMO_LIMIT:
        kept = slots[slot] = (version, {})
    return kept[1]


def rows(con: Connection, sql: str, params=()) -> list[dict]:
    with guard(con):
        cur = con.execute(sql, params)
        try:
            names = [d[0] for d in cur.get_description()]
        except apsw.ExecutionCompleteError:
            return []
        return [dict(zip(names, r)) for r in cur]


def stream(con: Connection, sql: str, params=()):
    """Rows as tuples, read one at a time (for passes over every vector)."""
    with guard(con):
        yield from con.execute(sql, params)


def vector_blob(vec) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def quick_check(con: Connection) -> list[str]:
    """SQLite's integrity check; a file too damaged to check says so in the list."""
    try:
        return [r[0] for r in apsw.Connection.execute(con, "PRAGMA integrity_check")]
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        return [str(exc)]
    except apsw.Error as exc:
        raise translate(exc, con) from exc
