"""The argument rules of every surface (Python, command line, socket, MCP): one check, one message each."""

from __future__ import annotations

import math
import re
from pathlib import Path

from indexer.config import MODES, SCOPES
from indexer.errors import ArgumentError
from indexer.models import RECALL_HEADER, recall_source

MIN_TEXT_CHARS = 40  # the shortest part of a memory a recall line shows before it is cut with …
# a recall block smaller than its header plus one short memory and its source can hold nothing
MIN_RECALL_CHARS = len(RECALL_HEADER + "\n- ") + MIN_TEXT_CHARS + len(recall_source("user/x.md", 1, 2))
IMPORTANCE = (1, 5)


def whole_number(name: str, value, minimum: int = 1, maximum: int | None = None, default: int | None = None,
                 example: str = "") -> int:
    """An int from what a caller sent (JSON may give 5, 5.0 or "5") within [minimum, maximum]."""
    if value is None and default is not None:
        return default
    number = _as_int(value)
    if number is None or number < minimum or (maximum is not None and number > maximum):
        span = f"from {minimum} to {maximum}" if maximum is not None else f"of {minimum} or more"
        raise ArgumentError(name, f"must be a whole number {span}", value, example)
    return number


def _as_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        return int(value)
    return value if isinstance(value, int) else None


def count(name: str, value, default: int, most: int) -> int:
    """How many (top_k, page, page_size) as JSON bodies and query strings send it (5, 5.0, "5"), from 1 to most;
    left out (or "", an empty query parameter): default."""
    return whole_number(name, None if value == "" else value, 1, most, default=default,
                        example=f'{{"{name}": {default}}}')


def json_object(value, example: str) -> dict:
    """A request's body: a JSON object (a list, a string or null names nothing)."""
    if not isinstance(value, dict):
        raise ArgumentError("the body", "must be a JSON object", value, example)
    return value


def limit(value, default: int) -> int:
    return whole_number("limit", value, 1, default=default, example="limit=10")


def max_chars(value, default: int) -> int:
    return whole_number("max_chars", value, MIN_RECALL_CHARS, default=default, example="max_chars=1500")


# the fewest tokens a block holds one memory in: its header (4), "- " (1), a short memory (8) and its source (7)
MIN_RECALL_TOKENS = 20


def max_tokens(value) -> int | None:
    """A recall budget in tokens (None: the budget is in characters alone)."""
    return None if value is None else whole_number("max_tokens", value, MIN_RECALL_TOKENS, example="max_tokens=400")


def spaces(value) -> list[str] | None:
    """More spaces for one ranking: a list of space names ("" = the notes outside every space), or None."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
        raise ArgumentError("spaces", "must be a list of space names (\"\": the shared notes)", value,
                            'spaces=["alice", ""]')
    return list(value)


def shared(value) -> bool:
    """Whether the notes outside every space join a space's ranking (mdmem's `shared` of the HTTP bodies)."""
    if value is not None and not isinstance(value, bool):
        raise ArgumentError("shared", "must be true or false (true: the notes outside every space join the ranking)",
                            value, "shared=true")
    return bool(value)


def space_flags(names, shared: bool) -> tuple[str | None, list[str] | None]:
    """(space, spaces) from repeated --space NAME and --shared: one name alone reads that space as before;
    several names, or --shared, rank those spaces (and the notes outside every space) together."""
    names = spaces(list(names or ()))
    if len(names) <= 1 and not shared:
        return (names[0] if names else None), None
    return None, names + ([""] if shared else [])


def importance(value) -> int | None:
    return None if value is None else whole_number("importance", value, *IMPORTANCE, example="importance=4")


def choice(name: str, value, allowed, default=None):
    if value is None and default is not None:
        return default
    if value not in allowed:
        raise ArgumentError(name, f"must be one of {', '.join(allowed)}", value)
    return value


def one_of(name: str, value, allowed, example: str = ""):
    """A value from allowed, or None when left out (a filter not asked for)."""
    if value is None or value == "":
        return None
    if value not in allowed:
        raise ArgumentError(name, f"must be one of {', '.join(allowed)}", value, example)
    return value


def mode(value, default: str) -> str:
    return choice("mode", value, MODES, default)


def scope(value, allowed=SCOPES) -> str:
    return choice("scope", value, allowed, "all" if "all" in allowed else None)


def min_score(value, default: float) -> float:
    return default if value is None else _finite("min_score", value, "min_score=0.2")


def threshold(value) -> float | None:
    """mem0's `threshold`: hits scoring below it are dropped (its min_score); left out, None keeps them all."""
    return None if value is None else _finite("threshold", value, '{"threshold": 0.2}')


def _finite(name: str, value, example: str) -> float:
    # JSON bodies may say NaN or Infinity (Python's parser reads them): a cut nothing passes, or all
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError(name, "must be a finite number", value, example)
    return float(value)


def query_text(value, example: str) -> str:
    """A question sent in a request's body: a string holding words (null, a number or blanks ask nothing)."""
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError("query", "must be a non-empty string", value, example)
    return value


def text(name: str, value, example: str) -> str:
    """Non-empty text (a query, a memory)."""
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(name, "is empty; give the words", None, example)
    return value


def optional_text(name: str, value, example: str) -> str | None:
    """Text a caller may leave out (None or "": None), else a string."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ArgumentError(name, "must be a string", value, example)
    return value


def flag(name: str, value, default: bool, example: str) -> bool:
    """true or false as JSON sends them (left out: default)."""
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ArgumentError(name, "must be true or false", value, example)
    return value


def existing_path(value, what: str, example: str) -> Path:
    """An absolute path to a file or folder (`what`) on this machine (a daemon's working directory is nobody's)."""
    where = Path(text("path", value, example)).expanduser()
    if not where.is_absolute():
        raise ArgumentError("path", "must be absolute (the daemon reads it)", value, example)
    if not where.exists():
        raise ArgumentError("path", f"does not exist; give {what}", str(where), example)
    return where.resolve()


HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def model_name(value) -> str:
    """A sentence-transformers model folder (made absolute) or a Hugging Face name like org/model."""
    value = text("name", value, "sentence-transformers/all-MiniLM-L6-v2").strip()
    path = Path(value).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if path.exists() or value.startswith(("/", ".", "~")) or not HUB_NAME.fullmatch(value):
        raise ArgumentError("name", "is neither a model folder nor a Hugging Face name; give the folder or a name "
                            "like org/model", value, "sentence-transformers/all-MiniLM-L6-v2")
    return value


KEEP = ("start", "end")  # which part of a question longer than max_query_chars is searched


def question(value, most: int, keep: str = "start") -> str:
    """A query's text, non-empty, cut to `most` characters: search keeps the start (what is asked comes
    first), recall keeps the end (a conversation's question is its last turn). Surrounding blanks do not count."""
    value = text("query", value, '"backup plan"')
    if len(value) <= most:
        return value
    value = value.strip()
    return value[:most] if keep == "start" else value[-most:]


def truncation(value, most: int) -> dict | None:
    """What question() cut, as answers report it: {"chars": characters given, "kept": characters searched}, or
    None when nothing was."""
    if not isinstance(value, str) or len(value) <= most or len(value.strip()) <= most:
        return None
    return {"chars": len(value.strip()), "kept": most}


_GIVEN = {"limit": lambda v: limit(v, 1), "max_chars": lambda v: max_chars(v, MIN_RECALL_CHARS), "max_tokens": max_tokens,
          "spaces": spaces, "importance": importance, "min_score": lambda v: min_score(v, 0.0), "mode": lambda v: mode(v, "hybrid")}


def check_given(**arguments) -> None:
    """Check the arguments a caller set (None = left to the default) before they travel anywhere,
    so a remote call fails the same way, at once, as a local one."""
    for name, value in arguments.items():
        if value is not None:
            _GIVEN[name](value)
