"""What the memory browser reads beyond mem0's routes: health, memories with their counters, hits with their signals."""

from __future__ import annotations

from indexer.daemon import mem0_api as api
from indexer.errors import InputError
from indexer.index import sql

DEFAULT_LIMIT = 50


def status(mem, _query=None) -> dict:
    """GET /v1/ui/status: per store, its notes, chunks, vectors, pending and skipped notes (as `mdmem status`),
    with each skipped note's reason under "skipped_notes" ({uri: why})."""
    stores = mem.status(scope=api.SCOPE)
    for st in mem.stores(api.SCOPE):
        if st.name in stores:
            stores[st.name]["skipped_notes"] = {uri: seen[2] for uri, seen in sql.skipped_notes(st.con).items()}
    return {"stores": stores}


def memories(mem, body) -> dict:
    """POST /v1/ui/memories: the newest memories (of one space, between dates), each with its counters and
    strength: {"results": [...]} as `mdmem recent --json` gives them."""
    body = api.body_object(body if body is not None else {}, '{"space": "alice", "limit": 50}')
    limit = api.top_k(body.get("limit"), DEFAULT_LIMIT, name="limit", most=api.MAX_TOP_K)
    return {"results": mem.recent(limit=limit, scope=api.SCOPE, space=_text(body, "space"),
                                  since=_text(body, "since"), until=_text(body, "until"))}


def search(mem, body) -> dict:
    """POST /v1/ui/search: hybrid search (time words read) in one space, each hit with its signals; it counts as
    no access (recalled counts and strength are left as they were)."""
    body = api.body_object(body, '{"query": "tea", "space": "alice", "since": "2026-01-01"}')
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InputError('query must be a non-empty string, e.g. {"query": "tea"}')
    limit = api.top_k(body.get("limit"), api.DEFAULT_TOP_K, name="limit", most=api.MAX_TOP_K)
    # bump=False: a person looking (as they type) is not an agent recalling; strength stays the agents' to move
    hits = mem.search(query, scope=api.SCOPE, limit=limit, explain=True, bump=False, space=_text(body, "space"),
                      since=_text(body, "since"), until=_text(body, "until"))
    return {"results": [h.to_dict(explain=True) for h in hits]}


def _text(body: dict, name: str) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f'{name} must be a string, e.g. {{"{name}": "2026-01-01"}}')
    return value
