"""A query as the caller gave it (`Query`, checked once) and as every stage reads it (`AnalyzedQuery`, read once)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from indexer import validation
from indexer.config import Config
from indexer.errors import ArgumentError, CallerGoneError, SearchTimeoutError
from indexer.notes.spaces import space_name, space_uri
from indexer.notes.textseg import MAX_QUERY_TERMS, fts_match_expression, has_han, mostly_han, query_terms
from indexer.retrieval import timespan
from indexer.retrieval.episodes import named_days


@dataclass(frozen=True)
class Query:
    text: str
    mode: str
    limit: int
    under: tuple[str, ...] = ()
    min_score: float = 0.0
    explain: bool = False
    space: str | None = None  # a checked space name; None: the default space (notes outside spaces/)
    spaces: tuple[str, ...] = ()  # when set, searched instead of space, in one ranking ("": the default space)
    since: str | None = None  # ISO day: memories dated on or after it
    until: str | None = None  # ISO day: memories dated before it (the day after the --until day)
    keep: str = "start"  # the part of a question over max_query_chars that is searched (validation.question)
    deadline: float | None = None  # time.monotonic() past which the search stops (search_within sets it)
    timeout_s: float = 0.0  # the setting the deadline came from, for the message
    gone: Callable[[], bool] | None = field(default=None, compare=False, repr=False)  # whether the caller left

    def in_time(self) -> None:
        """SearchTimeoutError once the deadline has passed, CallerGoneError once the caller has closed its
        connection (a server's request); each stage asks before it starts."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self.late()
        if self.gone is not None and self.gone():
            raise CallerGoneError("the caller closed its connection; the search stopped before its next stage")

    def late(self) -> SearchTimeoutError:
        return SearchTimeoutError(f"the search took longer than search_timeout_s = {self.timeout_s:g} s (the "
                                  "daemon is busy); retry, or raise search_timeout_s in config.toml")

    def left(self) -> float | None:
        """Seconds to the deadline (None: no deadline)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())


def make_query(cfg: Config, text: str, mode: str | None = None, limit: int | None = None, under=(),
               min_score: float | None = None, explain: bool = False, space: str | None = None,
               since=None, until=None, now=None, span: tuple[str | None, str | None] | None = None,
               keep: str = "start", deadline: float | None = None, spaces=(), gone=None) -> Query:
    """The caller's arguments checked; span: since and until already resolved by timespan.bounds (recall
    resolves them once for all its searches); a text over max_query_chars cut, keeping its `keep` part;
    deadline: a time.monotonic() the search must end by (else search_within gives it search_timeout_s);
    spaces: several spaces searched as one (names, "" or None for the default space), instead of space;
    gone: asked before each stage, True once the caller has left (the search stops)."""
    text = validation.question(text, cfg.max_query_chars, keep)
    mode = validation.mode(mode, cfg.mode)
    limit = validation.limit(limit, cfg.limit)
    min_score = validation.min_score(min_score, cfg.min_score)
    under = [under] if isinstance(under, str) else under or ()
    if not isinstance(under, (list, tuple)) or not all(isinstance(u, str) for u in under):
        raise ArgumentError("under", "must be a folder prefix or a list of them", under, 'under="projects/"')
    under = tuple(valid_text(u).strip().lstrip("./") for u in under if u.strip())
    space = space_name(space)
    spaces = tuple(dict.fromkeys(space_name(s) or "" for s in spaces))
    under = tuple(u if u.startswith(space_uri(space, "")) else space_uri(space, u) for u in under) if space else under
    since, until = span if span is not None else timespan.bounds(since, until, timespan.today(now, cfg.timezone))
    return Query(text=valid_text(text), mode=mode, limit=limit, under=under, min_score=min_score, explain=explain,
                 space=space, spaces=spaces, since=since, until=until, keep=keep, deadline=deadline,
                 timeout_s=cfg.search_timeout_s, gone=gone)


def valid_text(text: str) -> str:
    """Lone surrogates (undecodable bytes in argv) cannot reach SQLite or a model: make them U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


@dataclass(frozen=True)
class AnalyzedQuery:
    """What the stages ask of a query's text, worked out once: its words, whether it is Chinese, the days
    it names. Per-store readings (a store's vocabulary, its idf) stay with the store's own stage."""

    q: Query
    terms: tuple[str, ...]  # the query's words as the full-text side keeps them (stopwords out, capped)
    match: str  # the plain MATCH expression; "" when it has none (only punctuation or stopwords)
    han: bool  # holds a Han character: the Chinese vector weight applies
    mostly_han: bool  # Chinese rather than English with a Chinese name: the ranking model's script
    days: frozenset[str] = field(default_factory=frozenset)  # YYYY-MM-DD the text names
    months: frozenset[str] = field(default_factory=frozenset)  # YYYY-MM the text names

    @property
    def text(self) -> str:
        return self.q.text


def analyze(q: Query) -> AnalyzedQuery:
    days, months = named_days(q.text)
    return AnalyzedQuery(q=q, terms=tuple(query_terms(q.text)[:MAX_QUERY_TERMS]), match=fts_match_expression(q.text),
                         han=has_han(q.text), mostly_han=mostly_han(q.text), days=frozenset(days),
                         months=frozenset(months))
