"""The one exception family of mdmem: every message says how to fix the problem."""


class MdmemError(Exception):
    """Base error; str(err) is one line a user can act on."""

    exit_code = 1


class ConfigError(MdmemError):
    """Bad configuration value, flag or environment variable."""

    exit_code = 2


class EmbedderError(MdmemError):
    """An embedding model could not be loaded or used."""


class ExtensionError(MdmemError):
    """The SQLite binding cannot load sqlite-vec or lacks FTS5."""


class StoreError(MdmemError):
    """An index file is unreadable, corrupt or locked."""


class CorruptIndexError(StoreError):
    """The index file is damaged; `mdmem rebuild` recreates it from the notes."""


class IndexMismatchError(StoreError):
    """The index was built with another embedder, dimension or chunker."""


class NoteError(MdmemError):
    """A note cannot be read or parsed (the indexer skips it and goes on)."""


class InputError(MdmemError):
    """A user argument (query, path, option) is not acceptable."""

    exit_code = 2


class NotFoundError(InputError):
    """No memory or note answers to the id or path given (it may have changed since it was read)."""


class ConflictError(NoteError):
    """The note changed since the memory was read; nothing was written."""
