"""The review queue over HTTP (/v1/review/): what `add` decided on its own and what waits for a person, with the
same token, session and CSRF checks as every other route."""

from __future__ import annotations

from indexer import validation
from indexer.daemon import mem0_api as api

_BODY = '{"user_id": "alice", "text": "I prefer green tea"}'


def listing(mem, query: dict) -> dict:
    """GET /v1/review?all=true&user_id=alice: the entries waiting (all: the whole decision log), newest first."""
    space, _key = api.owner(query)
    everything = str(query.get("all", "")).lower() in ("1", "true", "yes")
    return mem.review("list", space=space, all=everything)


def _resolve(action: str):
    def handler(mem, decision_id: str, body) -> dict:
        body = api.body_object(body if body is not None else {}, _BODY)
        space, _key = api.owner(body)
        text = validation.optional_text("text", body.get("text"), _BODY)
        return mem.review(action, id=decision_id, text=text, space=space)
    handler.__doc__ = f"POST /v1/review/{{decision_id}}/{action}"
    return handler


accept, reject, undo, edit = (_resolve(a) for a in ("accept", "reject", "undo", "edit"))


def consolidate(mem, body) -> dict:
    """POST /v1/review/consolidate {"now": "2026-11-25"}: propose the summaries of old journal weeks now."""
    body = api.body_object(body if body is not None else {}, '{"now": "2026-11-25"}')
    return mem.consolidate(now=body.get("now"))
