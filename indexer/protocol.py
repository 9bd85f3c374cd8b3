"""What every memory backend answers: the in-process `Memory` and the daemon's socket client alike."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from indexer.models import Hit, SyncReport, VerifyReport


@runtime_checkable
class MemoryAPI(Protocol):
    """The operations the command line, MCP and HTTP call; a test holds both backends to these signatures."""

    def index(self, scope: str = "all", progress=None) -> list[SyncReport]:
        """Incremental sync: new, changed and deleted files only."""

    def rebuild(self, scope: str = "all", no_cache: bool = False, progress=None) -> list[SyncReport]:
        """Recreate the index from the Markdown and swap it in atomically."""

    def search(self, query: str, mode: str | None = None, scope: str = "all", limit: int | None = None,
               under=(), min_score: float | None = None, explain: bool = False, bump: bool = True) -> list[Hit]:
        """One merged ranking over the chosen stores; every returned hit counts as an access."""

    def stats(self, scope: str = "all") -> dict:
        """Files, chunks, vectors and counts by type, per store."""

    def status(self, scope: str = "all") -> dict:
        """Per store: files, chunks, last sync, and whether the index lags the notes."""

    def decay(self, scope: str = "all") -> list[dict]:
        """Recompute every chunk's strength now."""

    def cleanup(self, scope: str = "all") -> list[dict]:
        """Drop rows of vanished files and orphans, optimise FTS, checkpoint the WAL."""

    def add(self, text: str, type: str = "fact", importance: int | None = None, scope: str | None = None,
            file: str | None = None, redact: bool = False) -> dict:
        """Write one memory to its Markdown note (or reinforce its twin) and index it at once."""

    def recall(self, query: str, context: str | None = None, limit: int | None = None,
               max_chars: int | None = None, scope: str = "all") -> dict:
        """The prompt-ready block {"text", "memories", "tier", "query"}."""

    def verify(self, scope: str = "all", repair: bool = False) -> list[VerifyReport]:
        """Compare each store with its notes; with repair, re-index what differs and check again."""

    def close(self) -> None:
        """Release connections."""


OPERATIONS = tuple(name for name in MemoryAPI.__dict__ if not name.startswith("_") and name != "close")
