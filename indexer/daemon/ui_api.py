"""What the memory browser reads and changes beyond mem0's routes: memories and hits filtered, supersede, import."""

from __future__ import annotations

from pathlib import Path

from indexer import validation
from indexer.daemon import mem0_api as api
from indexer.errors import ConflictError
from indexer.notes.names import IMPORT_FORMATS, MEMORY_TYPES

DEFAULT_LIMIT = 50
STORES = ("global", "project", "all")


def memories(mem, body) -> dict:
    """POST /v1/ui/memories: the newest memories (of one store, space, type or note, between dates), each with
    its counters and strength: {"results": [...]} as `mdmem recent --json` gives them."""
    body = api.body_object(body if body is not None else {}, '{"space": "alice", "limit": 50}')
    limit = api.top_k(body.get("limit"), DEFAULT_LIMIT, name="limit", most=api.MAX_TOP_K)
    return {"results": mem.recent(limit=limit, scope=_store(body), space=_text(body, "space"),
                                  since=_text(body, "since"), until=_text(body, "until"), type=_type(body),
                                  note=_text(body, "note"))}


def search(mem, body) -> dict:
    """POST /v1/ui/search: hybrid search (time words read) in one store and space, of one type, between dates,
    each hit with its signals; it counts as no access (recalled counts and strength are left as they were)."""
    body = api.body_object(body, '{"query": "tea", "space": "alice", "since": "2026-01-01"}')
    query = validation.text("query", body.get("query"), '{"query": "tea"}')
    limit = api.top_k(body.get("limit"), api.DEFAULT_TOP_K, name="limit", most=api.MAX_TOP_K)
    kind = _type(body)
    # bump=False: a person looking (as they type) is not an agent recalling; strength stays the agents' to move
    args = dict(scope=_store(body), explain=True, bump=False, space=_text(body, "space"), since=_text(body, "since"),
                until=_text(body, "until"))
    _read, kept = api.read_down(lambda n: mem.search(query, limit=n, **args), limit,
                                lambda h: kind is None or h.type == kind, kind is not None)
    return {"results": [h.to_dict(explain=True) for h in kept]}


def supersede(mem, body) -> dict:
    """POST /v1/ui/supersede {"id", "text"}: the new value written beside the old memory (same space, store and
    type), the old line struck through in its note and kept (`mdmem add --supersedes`)."""
    body = api.body_object(body, '{"id": "0123456789abcdef", "text": "I live in Berlin now"}')
    rid = validation.text("id", body.get("id"), '{"id": "0123456789abcdef"}')
    text = validation.text("text", body.get("text"), '{"text": "I live in Berlin now"}')
    space = mem.locate(rid, scope="all")
    old = mem.get(rid, space=space, scope="all")
    return mem.add(text, type=old["type"], scope=old["store"], space=space, supersedes=rid)


# One memory by id, in whichever store the daemon serves holds it (mem0's own routes reach the global store only):
# the same handlers, so a project's memory is read, edited, forgotten and put back as a global one is.
def memory(mem, memory_id: str) -> dict:
    """GET /v1/ui/memories/{id}: the memory as its note holds it now (mem0's shape)."""
    return api.get(mem, memory_id, scope="all")


def update(mem, memory_id: str, body) -> dict:
    """PUT /v1/ui/memories/{id} {"text"}: new text in place, as mem0's PUT."""
    return api.update(mem, memory_id, body, scope="all")


def forget(mem, memory_id: str) -> dict:
    """DELETE /v1/ui/memories/{id}: the memory leaves its note (kept in its store's trash for undo)."""
    return api.delete(mem, memory_id, scope="all")


def restore(mem, memory_id: str) -> dict:
    """POST /v1/ui/memories/{id}/restore: a forgotten or edited memory's old text back, from its store's trash."""
    return api.restore(mem, memory_id, scope="all")


def history(mem, memory_id: str) -> list[dict]:
    """GET /v1/ui/memories/{id}/history: the memory's events and note versions, oldest first."""
    return api.history(mem, memory_id, scope="all")


def import_path(mem, body) -> dict:
    """POST /v1/ui/import {"path", "format", "space", "dry_run", "digest"}: a SillyTavern data folder or file, or a
    mem0 export, on this machine, into the global store (`mdmem import`); dry_run (the default) writes nothing and
    lists the memories it would write; with a preview's digest the import refuses (409) to write anything else."""
    body = api.body_object(body, '{"path": "/home/me/SillyTavern/data/default-user", "dry_run": true}')
    where = validation.existing_path(body.get("path"), "a SillyTavern data folder or file, or a mem0 export",
                                     f'{{"path": "{Path.home() / "export.json"}"}}')
    fmt = validation.one_of("format", body.get("format"), IMPORT_FORMATS,
                            '{"format": "mem0"} (or left out: read from the content)')
    dry_run = validation.flag("dry_run", body.get("dry_run"), True, '{"dry_run": true}')
    source, args = str(where), dict(format=fmt, space=_text(body, "space"), scope=api.SCOPE, skip_bad=True)
    digest = _text(body, "digest")  # the preview's: the import writes what was shown, or nothing
    if not dry_run and digest is not None and mem.import_notes(source, dry_run=True, **args)["digest"] != digest:
        raise ConflictError("what this import would write changed since its preview (the files read, or the notes "
                            "it adds to); preview it again")
    return mem.import_notes(source, dry_run=dry_run, **args)


def _store(body: dict) -> str:
    return validation.one_of("store", body.get("store"), STORES, '{"store": "global"}') or api.SCOPE


def _type(body: dict) -> str | None:
    return validation.one_of("type", body.get("type"), MEMORY_TYPES, '{"type": "fact"}')


def _text(body: dict, name: str) -> str | None:
    return validation.optional_text(name, body.get(name), f'{{"{name}": "2026-01-01"}}')
