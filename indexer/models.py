"""Frozen dataclasses that cross module boundaries: parsed chunks, notes and search hits."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_id(uri: str, start_line: int, end_line: int, content_hash: str) -> str:
    return hashlib.sha256(f"{uri}:{start_line}:{end_line}:{content_hash}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a note; lines are 1-based and inclusive."""

    uri: str
    start_line: int
    end_line: int
    content: str
    section: str
    token_count: int
    kind: str = "section"  # "memory": one list item of a memory note; "section": a piece of a document
    date: str | None = None  # ISO day (or day and time) the memory is about; None: the file's mtime
    tags: tuple[str, ...] = ()  # inline #tags of a memory (the note's own tags are added when written)
    importance: int | None = None  # inline importance of a memory; None: the note's
    content_hash: str = field(init=False)
    id: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "content_hash", sha256_text(self.content))
        object.__setattr__(self, "id", chunk_id(self.uri, self.start_line, self.end_line, self.content_hash))


@dataclass(frozen=True)
class Note:
    """A parsed note: its chunks and the metadata its front matter and path give them."""

    uri: str
    parent_dir: str
    type: str
    importance: int
    evergreen: bool
    tags: tuple[str, ...]
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hit:
    """One search result, as every caller (CLI, socket, MCP, API) sees it."""

    id: str
    uri: str
    start_line: int
    end_line: int
    section: str
    content: str
    score: float
    store: str
    type: str
    importance: int
    reinforcement: float
    access_count: int
    explain: dict | None = None
    kind: str = "section"
    date: str | None = None

    def to_dict(self, explain: bool = False) -> dict:
        d = asdict(self)
        if not explain:
            d.pop("explain")
        d["score"] = round(self.score, 6)
        return d
