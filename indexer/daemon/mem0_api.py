"""mem0's self-hosted REST subset on the memory: same paths and JSON shapes, spaces for user_id/agent_id, no LLM."""

from __future__ import annotations

from datetime import datetime, timezone

from indexer.errors import InputError
from indexer.models import sha256_text
from indexer.notes.append import strip_item
from indexer.notes.imports_mem0 import OWNER_KEYS as IDS, owner_of
from indexer.ops.get import record_date

SCOPE = "global"  # HTTP callers live outside any project: their memories are the global store's
DEFAULT_TOP_K = 10
MAX_TOP_K = 1000  # mem0's ALL_MEMORIES_LIMIT


def _owner(fields: dict) -> tuple[str | None, str | None]:
    """(space, the id key it came from): the user, else the agent, else the run; all absent: the default space."""
    for key in IDS:
        if fields.get(key) is not None and not isinstance(fields[key], str):
            raise InputError(f"{key} must be a string")
    return owner_of(fields)


def _object(body, what: str) -> dict:
    if not isinstance(body, dict):
        raise InputError(f"the body must be a JSON object, e.g. {what}")
    return body


def _top_k(value, default: int = DEFAULT_TOP_K) -> int:
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = -1
    if isinstance(value, bool) or not 0 < n <= MAX_TOP_K or (isinstance(value, float) and value != n):
        raise InputError(f"top_k must be a whole number from 1 to {MAX_TOP_K}")
    return n


def memory_text(text: str) -> str:
    """What mem0 calls the memory: the note's lines without headings, list markers, stamps or speaker labels."""
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    return "\n".join(strip_item(ln) for ln in lines).strip()


def _iso(value) -> str | None:
    if isinstance(value, (int, float)) and value > 0:
        return datetime.fromtimestamp(value, tz=timezone.utc).astimezone().isoformat(timespec="seconds")
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace(" ", "T")).astimezone().isoformat(timespec="seconds")
    return None


def _item(rec: dict, space: str | None, owner_key: str | None, score: float | None = None) -> dict:
    """One memory in mem0's shape; where it lives in the notes goes in metadata."""
    text = rec.get("text", rec.get("content", ""))
    created = _iso(record_date(rec["uri"], text)) or _iso(rec.get("created_at"))
    out = {"id": rec["id"], "memory": memory_text(text), "hash": rec.get("hash") or sha256_text(text),
           "metadata": {"uri": rec["uri"], "start_line": rec["start_line"], "end_line": rec["end_line"],
                        "store": rec.get("store")},
           "created_at": created, "updated_at": _iso(rec.get("updated_at")) or created}
    if score is not None:
        out["score"] = round(score, 6)
    if space is not None:
        out[owner_key or "user_id"] = space
    return out


def add(mem, body) -> dict:
    """POST /memories: each message becomes a dated memory in the space (a restated one is reinforced)."""
    body = _object(body, '{"messages": [{"role": "user", "content": "I like tea"}], "user_id": "alice"}')
    messages = body.get("messages")
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, list) or not messages:
        raise InputError('messages must be a list such as [{"role": "user", "content": "I like tea"}]')
    if not any(isinstance(body.get(k), str) and body[k].strip() for k in IDS):
        raise InputError("At least one identifier (user_id, agent_id, run_id) is required.")  # mem0's own rule
    space, _key = _owner(body)
    said = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not isinstance(m.get("role", ""), str):
            raise InputError(f"messages[{i}] must be an object with a \"role\" and a \"content\" string")
        if m["content"].strip():
            said.append((m.get("role", "").strip(), m["content"].strip()))
    results = []
    for role, content in said:  # all checked first: a bad message leaves none of the request written
        text = f"**{role}:** {content}" if role.isidentifier() else content  # who said it, as chat imports write
        res = mem.add(text, type="episodic", scope=SCOPE, space=space)
        rec = _record_at(mem, res, space)
        results.append({"id": rec["id"] if rec else res.get("chunk_id"), "memory": content,
                        "event": "ADD" if res["action"] == "appended" else "NONE"})
    return {"results": results}


def _record_at(mem, res: dict, space: str | None) -> dict | None:
    """The indexed memory holding the lines add wrote (None when indexing is behind)."""
    found = mem.get(f"{res['uri']}:{res['start_line']}-{res['end_line']}", space=space, scope=SCOPE)
    line = res["start_line"]
    return next((r for r in found.get("records", []) if r["start_line"] <= line <= r["end_line"]), None)


def search(mem, body) -> dict:
    """POST /search: hybrid search inside the space the ids (top level or in filters) name."""
    body = _object(body, '{"query": "what does alice eat", "user_id": "alice"}')
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InputError('query must be a non-empty string, e.g. {"query": "food preferences", "user_id": "alice"}')
    filters = body.get("filters") or {}
    if not isinstance(filters, dict):
        raise InputError('filters must be an object, e.g. {"user_id": "alice"}')
    space, key = _owner({**filters, **{k: body[k] for k in IDS if body.get(k)}})
    threshold = body.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise InputError("threshold must be a number, e.g. 0.2")
    hits = mem.search(query, scope=SCOPE, limit=_top_k(body.get("top_k")), min_score=threshold, space=space,
                      now=body.get("now"))  # time words (last week) count from this day; default today
    return {"results": [_item({**h.to_dict(), "text": h.content}, space, key, score=h.score) for h in hits]}


def list_all(mem, query: dict) -> dict:
    """GET /memories: the space's newest memories, newest first."""
    space, key = _owner(query)
    return {"results": [_item(r, space, key) for r in mem.recent(limit=_top_k(query.get("top_k"), 100),
                                                                    scope=SCOPE, space=space)]}


def get(mem, memory_id: str) -> dict:
    """GET /memories/{id}: the memory as its note holds it now."""
    space = mem.locate(memory_id, scope=SCOPE)
    return _item(mem.get(memory_id, space=space, scope=SCOPE), space, None)


def update(mem, memory_id: str, body) -> dict:
    """PUT /memories/{id}: new text in place (date and counters kept); the id keeps naming the memory,
    as mem0's does (the record's own id changes with its text: `current_id`)."""
    body = _object(body, '{"text": "Prefers green tea"}')
    text = body.get("text", body.get("data"))
    if not isinstance(text, str) or not text.strip():
        raise InputError('text must be the memory\'s new text, e.g. {"text": "Prefers green tea"}')
    space = mem.locate(memory_id, scope=SCOPE)
    res = mem.update(memory_id, text, space=space)
    return {"message": "Memory updated successfully!", "id": memory_id, "current_id": res.get("id")}


def delete(mem, memory_id: str) -> dict:
    """DELETE /memories/{id}: the memory's lines leave its note and the index."""
    mem.forget(memory_id, space=mem.locate(memory_id, scope=SCOPE))
    return {"message": "Memory deleted successfully"}
