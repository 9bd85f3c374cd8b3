"""mem0's platform API (`/v1` `/v2` `/v3`, what `mem0ai`'s MemoryClient calls) on the self-hosted handlers."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from indexer import validation
from indexer.daemon import mem0_api as api
from indexer.errors import InputError
from indexer.notes.imports_mem0 import OWNER_KEYS as IDS

DEFAULT_PAGE_SIZE = 100
_DATE_OPS = {"gte", "gt", "lte", "lt"}
_FILTERS = f"{', '.join(IDS)}, metadata, created_at or updated_at ({'/'.join(sorted(_DATE_OPS))}), joined by AND"


@dataclass
class Selection:
    """What a mem0 `filters` object asks for: one space, and conditions on each memory found there."""

    ids: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    dates: list = field(default_factory=list)  # (field, op, ISO text)

    def keeps(self, memory: dict) -> bool:
        meta = memory.get("metadata") or {}
        if any(meta.get(k) != v for k, v in self.metadata.items()):
            return False
        for name, op, value in self.dates:
            have = (memory.get(name) or "")[:len(value)]  # compare at the precision the caller gave
            if not have or not {"gte": have >= value, "gt": have > value, "lte": have <= value,
                                 "lt": have < value}[op]:
                return False
        return True


def selection(filters, top: dict | None = None) -> Selection:
    """A filters object (plain, or {"AND": [...]}) with any ids given beside it; InputError for what is not served."""
    sel = Selection()
    _read(filters if filters is not None else {}, sel)
    for key in IDS:
        if (top or {}).get(key) is not None:
            sel.ids[key] = top[key]
    return sel


def _read(obj, sel: Selection) -> None:
    if not isinstance(obj, dict):
        raise InputError('filters must be an object, e.g. {"user_id": "alice"} or {"AND": [{"user_id": "alice"}]}')
    for key, value in obj.items():
        if key == "AND" or (key == "OR" and isinstance(value, list) and len(value) == 1):
            if not isinstance(value, list):
                raise InputError(f'{key} takes a list of filters, e.g. {{"{key}": [{{"user_id": "alice"}}]}}')
            for part in value:
                _read(part, sel)
        elif key in IDS:
            sel.ids[key] = value.get("eq") if isinstance(value, dict) else value
        elif key == "metadata" and isinstance(value, dict):
            sel.metadata.update(value)
        elif key in ("created_at", "updated_at") and isinstance(value, dict) and set(value) <= _DATE_OPS:
            sel.dates += [(key, op, str(v)) for op, v in value.items()]
        else:
            raise InputError(f"the filter {key!r} is not served by mdmem; filters can use {_FILTERS}")


def _space(sel: Selection) -> tuple[str | None, str | None]:
    return api.owner(sel.ids)


def ping(_mem, _query=None) -> dict:
    """GET /v1/ping/: what MemoryClient checks its key with (the token was checked before this runs)."""
    # the client refuses to start without both; they name no tenant here, and it never sends them back
    return {"status": "ok", "message": "mdmem", "org_id": "mdmem", "project_id": "mdmem", "user_email": None}


def add(mem, body) -> dict:
    """POST /v1/memories/ and /v3/memories/add/: as the self-hosted add (ids top level or in filters)."""
    return api.add(mem, body)


def search(mem, body) -> dict:
    """POST /search and /v1|v2|v3/memories/search/: hybrid search in the space the ids (top level or in
    filters) name, then the filters' conditions."""
    body = api.body_object(body, '{"query": "what does alice eat", "filters": {"user_id": "alice"}}')
    query = validation.query_text(body.get("query"), '{"query": "food", "filters": {"user_id": "alice"}}')
    sel = selection(body.get("filters"), body)
    space, key = _space(sel)
    want = api.top_k(body.get("top_k", body.get("limit")))
    hits, degraded = _kept(mem, body, query, space, key, sel, want)
    cut = validation.truncation(query, mem.cfg.max_query_chars)  # the search cut it (search keeps the start)
    return {"results": hits, **({"query_truncated": cut} if cut else {}), **({"degraded": True} if degraded else {})}


def _kept(mem, body: dict, query: str, space, key, sel: Selection, want: int) -> tuple[list[dict], bool]:
    """The first `want` hits of the ranking that meet the filters' conditions, and whether the ranking was degraded.
    The conditions are read after ranking (`api.read_down`); none of these reads counts an access, only the hits
    returned do, once."""
    def ranking(n: int) -> list[tuple]:
        hits = api.ranked(mem, body, query, space, n)
        return list(zip(hits, api.items(hits, body, space, key)))
    read, kept = api.read_down(ranking, want, lambda pair: sel.keeps(pair[1]), bool(sel.metadata or sel.dates))
    mem.writer.record_access([hit for hit, _one in kept])
    return [one for _hit, one in kept], any(one.get("degraded") for _hit, one in read)


def get_all(mem, query: dict | None, body) -> dict:
    """POST /v2|v3/memories/ (and GET /v1/memories/): the space's memories, newest first, a page at a time."""
    body = api.body_object(body if body is not None else {}, '{"filters": {"user_id": "alice"}}')
    query = {**(query or {}), **{k: body[k] for k in ("page", "page_size") if k in body}}
    sel = selection(body.get("filters"), body)
    for name, op in (("start_date", "gte"), ("end_date", "lte")):
        if body.get(name):
            sel.dates.append(("created_at", op, str(body[name])))
    space, key = _space(sel)
    page = api.top_k(query.get("page"), 1, name="page", most=api.MAX_LIST)
    size = api.top_k(query.get("page_size"), DEFAULT_PAGE_SIZE, name="page_size", most=api.MAX_TOP_K)
    every = [m for m in api.newest(mem, space, key) if sel.keeps(m)]
    shown = every[(page - 1) * size:page * size]
    return {"count": len(every), "next": None if page * size >= len(every) else page + 1,
            "previous": page - 1 if page > 1 else None, "results": shown}


def get_all_v1(mem, query: dict) -> dict:
    """GET /v1/memories/?user_id=…: as get_all, the ids in the query string."""
    return get_all(mem, {k: query[k] for k in ("page", "page_size") if k in query},
                   {**{k: v for k, v in query.items() if k in IDS}, "filters": _query_filters(query)})


def delete_all(mem, query: dict) -> dict:
    """DELETE /v1/memories/?user_id=…: every memory of that space (the ids may also come as `filters`)."""
    sel = selection(_query_filters(query), query)
    space, _key = _space(sel)
    if space is None:
        raise InputError("name whose memories to delete: user_id, agent_id or run_id")
    return {"message": api.deleted_message(api.forget_space(mem, space))}


def _query_filters(query: dict) -> dict:
    """`filters` as MemoryClient puts a dict into a query string (JSON, or Python's repr of it)."""
    raw = query.get("filters")
    if not raw:
        return {}
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(raw)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, dict):
            return value
    raise InputError('filters in the query string must be an object, e.g. filters={"user_id": "alice"}')


def entities(mem, _query=None) -> dict:
    """GET /v1/entities/: one entry per space that holds memories (mem0's users, agents and runs)."""
    return {"results": [{"id": row["space"], "name": row["space"], "type": "user", "total_memories": row["memories"],
                         "owner": None, "organization": None, "metadata": None,
                         "created_at": api.iso(row["created_at"]), "updated_at": api.iso(row["updated_at"])}
                        for row in mem.spaces(scope=api.SCOPE)]}


def delete_entity(mem, kind: str, name: str) -> dict:
    """DELETE /v2/entities/{type}/{name}/: every memory of that space."""
    if kind not in ("user", "agent", "run", "app"):
        raise InputError(f"entity type {kind!r} is not one of user, agent, run, app")
    api.forget_space(mem, api.owner({f"{kind}_id": name})[0])
    return {"message": "Entity deleted successfully."}


def batch_update(mem, body) -> dict:
    """PUT /v1/batch/: {"memories": [{"memory_id", "text", "metadata"}]}, each as one update."""
    items = _batch(body, '{"memories": [{"memory_id": "…", "text": "Prefers green tea"}]}')
    for one in items:
        api.update(mem, one["memory_id"], {k: v for k, v in one.items() if k in ("text", "metadata")})
    return {"message": f"Successfully updated {len(items)} memories"}


def batch_delete(mem, body) -> dict:
    """DELETE /v1/batch/: {"memories": [{"memory_id"}]}, each as one delete."""
    items = _batch(body, '{"memories": [{"memory_id": "…"}]}')
    for one in items:
        api.delete(mem, one["memory_id"])
    return {"message": f"Successfully deleted {len(items)} memories"}


def _batch(body, example: str) -> list[dict]:
    items = api.body_object(body, example).get("memories")
    if not isinstance(items, list) or not items or len(items) > api.MAX_TOP_K \
            or not all(isinstance(m, dict) and isinstance(m.get("memory_id"), str) for m in items):
        raise InputError(f"memories must be a list of 1 to {api.MAX_TOP_K} objects with a memory_id, e.g. {example}")
    return items

