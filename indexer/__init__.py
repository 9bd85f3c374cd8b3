"""mdmem: long-term memory over plain Markdown notes, indexed in SQLite for hybrid search."""

# Names resolve on first use, so `import indexer` (the thin socket client) loads no binding, numpy or rjieba.
__all__ = ["Memory", "MdmemError", "Hit"]
__version__ = "0.2.0"

_LAZY = {"Memory": "indexer.memory", "MdmemError": "indexer.errors", "Hit": "indexer.models"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")
