"""Dataclasses that cross module boundaries: parsed chunks, notes, search hits, sync and verify reports."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field

def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_id(uri: str, start_line: int, end_line: int, content_hash: str) -> str:
    return hashlib.sha256(f"{uri}:{start_line}:{end_line}:{content_hash}".encode()).hexdigest()[:16]


# The recall block's own words, which its size limits are measured with (validation) and clients read.
RECALL_HEADER = "Relevant long-term memory:"


def recall_source(uri: str, start: int, end: int) -> str:
    """Where a recall line came from, as it ends the line."""
    lines = f"L{start}" if start == end else f"L{start}-L{end}"
    return f" (source: {uri}#{lines})"


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
    type: str | None = None  # inline type of a memory (`<!-- type: decision -->`); None: the note's
    content_hash: str = field(init=False)
    id: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "content_hash", sha256_text(self.content))
        object.__setattr__(self, "id", chunk_id(self.uri, self.start_line, self.end_line, self.content_hash))


class Caveat(str):
    """A warning about a note indexed all the same; `event` names it in the daemon's log (a plain warning
    logs as note_skipped: the note was left out)."""

    def __new__(cls, text: str, event: str):
        made = super().__new__(cls, text)
        made.event = event
        return made

    def __reduce__(self):
        return Caveat, (str(self), self.event)


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
    explain: dict | None = None  # the signals, shown when the caller asked for them
    kind: str = "section"
    date: str | None = None
    relevance: float | None = None  # 0-1, calibrated per question (retrieval/relevance); None without the ranking model
    # every stage's reading of this hit (bm25, cosine, e5_cosine, lifts…): always filled by search, read by
    # recall and forget; a hit that came over the socket has none
    signals: dict = field(default_factory=dict, repr=False, compare=False)
    degraded: bool = False  # ranked while the embedding provider was down or notes waited for their vectors
    # the ranking model re-scored the hits around it but this text's vector was still being filled (a big `index`
    # leaves them to the daemon or the next index): it kept its first-stage place
    ranking_pending: bool = False

    def to_dict(self, explain: bool = False) -> dict:
        d = asdict(self)
        d.pop("signals")
        if not explain:
            d.pop("explain")
        if not self.degraded:
            d.pop("degraded")  # said once per answer (`degraded` beside `results`); a hit carries it only when set
        if not self.ranking_pending:
            d.pop("ranking_pending")
        d["score"] = round(self.score, 6)
        return d


@dataclass
class SyncReport:
    """What one sync of a store did; mutable because a sync adds to it file by file."""

    store: str
    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_added: int = 0
    chunks_kept: int = 0
    chunks_removed: int = 0
    embedded: int = 0
    reinforced: int = 0
    vectors_pending: int = 0  # texts indexed without their vectors: the provider was down; filled when it answers
    skipped: list[str] = field(default_factory=list)  # notes left out, each with why and how to fix it
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)  # notes indexed, but with a part left out
    left_out: dict = field(default_factory=dict)  # uri -> [size, mtime_ns, reason] of the notes skipped

    def add(self, other: "SyncReport") -> None:
        for name in ("files", "indexed", "unchanged", "deleted", "chunks_added", "chunks_kept", "chunks_removed",
                     "embedded", "reinforced", "vectors_pending"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped.extend(other.skipped)
        self.warnings.extend(other.warnings)
        self.left_out.update(other.left_out)

    def skip(self, message: str, warn=None, note: tuple | None = None) -> None:
        """Record a note left out ((uri, size, mtime_ns) when it has a stat), and tell the user at once."""
        self.skipped.append(message)
        if note is not None:
            self.left_out[note[0]] = [note[1], note[2], message]
        if warn:
            warn(message)

    def caveat(self, message: str, warn=None) -> None:
        """Record a part of an indexed note that was left out (the note itself is searchable)."""
        self.warnings.append(message)
        if warn:
            warn(message)


@dataclass(frozen=True)
class Difference:
    """One way the index disagrees with the notes; `uri` is "" for store-wide problems."""

    kind: str
    uri: str
    detail: str

    def line(self, store_name: str) -> str:
        where = f"{self.uri}: " if self.uri else ""
        return f"{store_name}: {self.kind}: {where}{self.detail}"


@dataclass
class VerifyReport:
    """What `verify` found in one store, and what a repair did."""

    store: str
    files: int = 0
    chunks: int = 0
    skipped: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    found: int = 0  # differences seen before a repair

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict:
        return {"store": self.store, "ok": self.ok, "files": self.files, "chunks": self.chunks,
                "skipped": self.skipped, "repaired": self.repaired, "found": self.found,
                "differences": [asdict(d) for d in self.differences]}

    @classmethod
    def from_dict(cls, d: dict) -> "VerifyReport":
        """The report again from its JSON form (answers of the daemon)."""
        return cls(store=d["store"], files=d["files"], chunks=d["chunks"], skipped=list(d["skipped"]),
                   differences=[Difference(**x) for x in d["differences"]], repaired=list(d["repaired"]),
                   found=d["found"])
