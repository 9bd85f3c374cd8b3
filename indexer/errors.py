"""The one exception family of mdmem: every message says how to fix the problem."""

import errno


class MdmemError(Exception):
    """Base error; str(err) is one line a user can act on."""

    exit_code = 1


class ConfigError(MdmemError):
    """Bad configuration value, flag or environment variable."""

    exit_code = 2


class EmbedderError(MdmemError):
    """An embedding model could not be loaded or used."""


class ProviderError(EmbedderError):
    """A model provider refused the request or answered nonsense; the message says what to fix."""


class ProviderUnavailable(ProviderError):
    """A model provider did not answer within its deadline and retries; the note is kept and its vectors wait."""


class ExtensionError(MdmemError):
    """The SQLite binding cannot load sqlite-vec or lacks FTS5."""


class StoreError(MdmemError):
    """An index file is unreadable, corrupt or locked."""


class DiskFullError(StoreError):
    """No space left where mdmem must write (disk, quota or file-size limit); nothing was written."""


class ReadOnlyStoreError(StoreError):
    """The store's folder or index is read-only (a mounted snapshot, a read-only volume)."""


class AccessDeniedError(StoreError):
    """The file system refuses this user access to a note or an index file."""


class StoreBusyError(StoreError):
    """Another process holds the index's write lock longer than the busy timeout."""


class BusyError(StoreError):
    """Busy, retry: an answer did not come within its deadline (HTTP 503 with Retry-After)."""

    exit_code = 75  # EX_TEMPFAIL: a temporary failure, try again

    def __init__(self, message: str, retry_after: int = 5):
        super().__init__(message)
        self.retry_after = retry_after


class WriterBusyError(BusyError):
    """A store's writer did not finish a job within the caller's deadline; the job still runs, retry later."""


class SearchTimeoutError(BusyError):
    """A search ran past search_timeout_s and stopped; nothing was counted, retry later."""


class CallerGoneError(MdmemError):
    """The caller closed its connection during a search: it stopped before its next stage; nothing was counted."""


class CorruptIndexError(StoreError):
    """The index file is damaged; `mdmem rebuild` recreates it from the notes."""


class IndexMismatchError(StoreError):
    """The index was built with another embedder, dimension or chunker."""


class NoteError(MdmemError):
    """A note cannot be read or parsed (the indexer skips it and goes on)."""


class NoteBusyError(NoteError, BusyError):
    """Another program kept saving the note while mdmem wrote it; nothing was written or acknowledged, retry."""


class InputError(MdmemError):
    """A user argument (query, path, option) is not acceptable."""

    exit_code = 2


class ArgumentError(InputError):
    """An argument breaks its rule; worded for any caller, with the flag's name for the command line."""

    POSITIONAL = ("query", "text", "name")  # arguments, not options, on the command line

    def __init__(self, name: str, rule: str | None = None, got=None, example: str = ""):
        if rule is None:  # rebuilt from its message alone (an answer over the socket): keep it whole
            self.name, self.rule, self.got, self.example = "", name, None, ""
            super().__init__(name)
            return
        self.name, self.rule, self.got, self.example = name, rule, got, example
        super().__init__(self.worded(name))

    def worded(self, name: str, example: str | None = None) -> str:
        got = "" if self.got is None else f" (got {_shown(self.got)})"
        example = self.example if example is None else example
        return f"{name} {self.rule}{got}" + (f"; e.g. {example}" if example else "")

    def for_cli(self) -> str:
        if not self.name:
            return str(self)
        flag = self.name.upper() if self.name in self.POSITIONAL else "--" + self.name.replace("_", "-")
        return self.worded(flag, self.example.replace(f"{self.name}=", f"{flag} ") if self.example else "")


def _shown(value) -> str:
    """An argument as a message shows it: never more than 80 characters of it (a pasted 10 KB text)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


class NotFoundError(InputError):
    """No memory or note answers to the id or path given (it may have changed since it was read)."""


class ConflictError(NoteError):
    """The note changed since the memory was read; nothing was written."""


# a file-size limit (EFBIG) stops a writer exactly as a full disk does
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS}
_DENIED = {errno.EPERM, errno.EACCES}


def for_os_error(exc: OSError, path) -> MdmemError:
    """One line naming the cause and the place of a failed file write (errno decides the kind)."""
    code = exc.errno
    if code in _NO_SPACE:
        return DiskFullError(f"disk full: {path} (free some space; nothing was written)")
    if code in _READ_ONLY:
        return read_only(path)
    if code in _DENIED:
        return AccessDeniedError(f"permission denied: {path} (give this user write access; nothing was written)")
    return StoreError(f"cannot write {path}: {exc.strerror or exc} (nothing was written)")


def read_only(path) -> ReadOnlyStoreError:
    return ReadOnlyStoreError(f"read-only: {path} (searches still answer; writing needs a writable store, nothing was written)")


def for_errno(code: int, path) -> MdmemError | None:
    """The specific error for a system errno SQLite reported, or None when it is no known cause."""
    if code in _NO_SPACE | _READ_ONLY | _DENIED:
        return for_os_error(OSError(code, ""), path)
    return None
