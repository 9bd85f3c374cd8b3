"""POST /v1/recall/: the prompt-ready block recall makes, so every client injects the same block built in one place."""

from __future__ import annotations

from indexer import validation
from indexer.daemon import mem0_api as api
from indexer.errors import InputError
from indexer.notes.imports_mem0 import OWNER_KEYS as IDS

_EXAMPLE = '{"query": "what does alice eat", "user_id": "alice", "context": "Alice: I cooked tonight"}'
_CONTEXT_MESSAGES = 50  # the newest messages of a list context read; recall keeps at most its own context budget


def recall(mem, body) -> dict:
    """The block for a question in one space (ids as mem0's), or several (`spaces`, `shared`: the notes outside
    every space), with its memories, the tier that found them, the window its time words named and whether the
    question was cut: {"text", "memories", "tier", "query", "query_truncated", ...}; "text" is "" when nothing fits."""
    body = api.body_object(body, _EXAMPLE)
    query = body.get("query")
    if not isinstance(query, str):
        raise InputError(f"query must be a string, e.g. {_EXAMPLE}")
    space, _key = api.owner({k: body.get(k) for k in IDS})
    spaces = _spaces(body.get("spaces"), body.get("shared"))
    res = mem.recall(query, context=_context(body.get("context")), limit=body.get("limit"),
                     max_chars=body.get("max_chars"), max_tokens=body.get("max_tokens"),
                     scope=api.SCOPE if space or spaces else "all", space=space, spaces=spaces,
                     since=body.get("since"), until=body.get("until"), now=body.get("now"))
    return {**res, "query_truncated": res.get("query_truncated")}


def _spaces(names, shared) -> list[str] | None:
    """More spaces for the same ranking: the names given, and "" (the notes outside every space) when shared."""
    more = [*(validation.spaces(names) or []), *([""] if validation.shared(shared) else [])]
    return more or None


def _context(value) -> str | None:
    """The recent conversation, as text or as chat messages ({"role"|"name", "content"}), newest last."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise InputError('context must be a string or a list of messages such as [{"role": "user", "content": "hi"}]')
    lines = []
    for i, m in enumerate(value[-_CONTEXT_MESSAGES:]):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise InputError(f'context[{i}] must be an object with a "content" string')
        who = m.get("name") or m.get("role")
        text = " ".join(m["content"].split())
        if text:
            lines.append(f"{who}: {text}" if isinstance(who, str) and who.strip() else text)
    return "\n".join(lines)
