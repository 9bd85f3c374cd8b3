"""A memory's metadata as one visible sub-item of its list item: `  - metadata: {"chat": "Alice.jsonl"}`."""

from __future__ import annotations

import json
import re

from indexer.errors import InputError

KEY = "metadata"
MAX_CHARS = 2_000  # written on every memory of a request: a chat name and a time, not a document
# indented under the item: a top-level `- metadata: …` is a memory of its own, not this
_LINE = re.compile(r"^[ \t]+[-*+][ \t]+metadata:[ \t]*(?P<value>.*?)\s*$")


def checked(meta) -> dict | None:
    """The caller's metadata as it will be stored (None: none), or InputError saying how to fix it."""
    if meta is None or meta == {}:
        return None
    if not isinstance(meta, dict):
        raise InputError('metadata must be a JSON object, e.g. {"chat": "Alice.jsonl"}')
    size = len(line_of(meta))
    if size > MAX_CHARS:
        raise InputError(f"metadata is {size} characters as stored; keep it under {MAX_CHARS} (names and times, "
                         "not documents)")
    return meta


def line_of(meta: dict) -> str:
    """The sub-item as `add` writes it under the memory (JSON: every value comes back as it was given)."""
    return f"- {KEY}: " + json.dumps(meta, ensure_ascii=False, separators=(", ", ": "))


def is_line(line: str) -> bool:
    return bool(_LINE.match(line))


def split(text: str) -> tuple[str, dict | None]:
    """(the memory's text without its metadata line, the metadata or None).

    A line edited by hand into `key=value, key=value` is read too; one that is neither comes back
    whole under "text", so nothing written there is dropped.
    """
    kept, meta = [], None
    for line in text.split("\n"):
        m = _LINE.match(line)
        if m is None:
            kept.append(line)
            continue
        meta = {**(meta or {}), **_value(m.group("value"))}
    return "\n".join(kept).rstrip(), meta


def without(text: str) -> str:
    return split(text)[0]


def _value(raw: str) -> dict:
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    parts = [p.partition("=") for p in raw.split(",")]
    if raw and all(eq and key.strip() for key, eq, _ in parts):
        return {key.strip(): value.strip() for key, _, value in parts}
    return {"text": raw} if raw else {}
