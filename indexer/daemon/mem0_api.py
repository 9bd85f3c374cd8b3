"""mem0's self-hosted REST API on the memory: same paths and JSON shapes, spaces for user_id/agent_id."""

from __future__ import annotations

from datetime import datetime, timezone

from indexer import validation
from indexer.capture import policy as capture_policy
from indexer.daemon import mem0_events as history_log
from indexer.errors import ConflictError, InputError, NotFoundError
from indexer.models import sha256_text
from indexer.notes import item_metadata
from indexer.notes import trash as trash_files
from indexer.notes.append import strip_item
from indexer.notes.imports_mem0 import OWNER_KEYS as IDS, owner_of
from indexer.notes.spaces import space_of
from indexer.memories.get import record_date

SCOPE = "global"  # HTTP callers live outside any project: their memories are the global store's
DEFAULT_TOP_K = 10
MAX_TOP_K = 1000  # mem0's ALL_MEMORIES_LIMIT
MAX_LIST = 10_000  # get_all reads at most this many of a space's memories, newest first
_ADD_EXAMPLE = '{"messages": [{"role": "user", "content": "I like tea"}], "user_id": "alice"}'


def owner(fields: dict) -> tuple[str | None, str | None]:
    """(space, the id key it came from): the user, else the agent, the run, the app; all absent: the default space."""
    for key in IDS:
        if fields.get(key) is not None and not isinstance(fields[key], str):
            raise InputError(f"{key} must be a string")
        if fields.get(key) == "*":
            raise InputError(f"{key} \"*\" (every one) is not served: mdmem reads one space at a time; name it")
    return owner_of(fields)


def body_object(body, example: str) -> dict:
    return validation.json_object(body, example)


def top_k(value, default: int = DEFAULT_TOP_K, name: str = "top_k", most: int = MAX_TOP_K) -> int:
    return validation.count(name, value, default, most)


def mem0_text(text: str) -> str:
    """What mem0 calls the memory: the note's lines without headings, list markers, stamps, speaker labels
    or the metadata line."""
    lines = [ln for ln in item_metadata.without(text).split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    return "\n".join(strip_item(ln) for ln in lines).strip()


def iso(value) -> str | None:
    if isinstance(value, (int, float)) and value > 0:
        return datetime.fromtimestamp(value, tz=timezone.utc).astimezone().isoformat(timespec="seconds")
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace(" ", "T")).astimezone().isoformat(timespec="seconds")
    return None


def item(rec: dict, space: str | None, owner_key: str | None, score: float | None = None) -> dict:
    """One memory in mem0's shape: `metadata` is what the caller stored with it; where it lives in the
    notes is in uri, start_line, end_line and store."""
    text = rec.get("text", rec.get("content", ""))
    created = iso(record_date(rec["uri"], text)) or iso(rec.get("created_at"))
    out = {"id": rec["id"], "memory": mem0_text(text), "hash": rec.get("hash") or sha256_text(text),
           "metadata": item_metadata.split(text)[1], "categories": [],
           "created_at": created, "updated_at": iso(rec.get("updated_at")) or created,
           "uri": rec["uri"], "start_line": rec["start_line"], "end_line": rec["end_line"], "store": rec.get("store")}
    if score is not None:
        out["score"] = round(score, 6)
    if rec.get("degraded"):
        out["degraded"] = True  # ranked while the embedding provider was down or vectors were pending
    if space is not None:
        out[owner_key or "user_id"] = space
    return out


def add(mem, body) -> dict:
    """POST /memories: the messages become dated memories in the space as the capture policy says (`capture`,
    mem0's `infer`, else the configured one: raw keeps each message; a restated one is reinforced);
    `metadata` is written under each as a visible `- metadata: {…}` line."""
    body = body_object(body, _ADD_EXAMPLE)
    messages = body.get("messages")
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, dict):
        messages = [messages]
    if not isinstance(messages, list) or not messages:
        raise InputError('messages must be a list such as [{"role": "user", "content": "I like tea"}]')
    filters = body.get("filters") or {}
    if not isinstance(filters, dict):
        raise InputError('filters must be an object, e.g. {"user_id": "alice"}')
    ids = {**filters, **{k: body[k] for k in IDS if body.get(k) is not None}}
    if not any(isinstance(ids.get(k), str) and ids[k].strip() for k in IDS):
        raise InputError("At least one identifier (user_id, agent_id, run_id) is required.")  # mem0's own rule
    space, _key = owner(ids)
    meta = item_metadata.checked(body.get("metadata"))
    said = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not isinstance(m.get("role", ""), str):
            raise InputError(f"messages[{i}] must be an object with a \"role\" and a \"content\" string")
        if m["content"].strip():
            said.append((m.get("role") or "user", _speaker(m), m["content"].strip()))
    # all checked first: a bad message leaves none of the request written
    policy = capture_policy.chosen(mem.cfg, space, body.get("capture"), body.get("infer"))
    captured = capture_policy.capture(mem.cfg, said, policy)
    results = []
    for it in captured.items:
        text = f"**{it.speaker}:** {it.text}" if it.speaker else it.text  # who said it, as chat imports write
        if meta:
            text += "\n" + item_metadata.line_of(meta)
        res = mem.add(text, type=it.type, importance=it.importance, scope=SCOPE, space=space)
        rec = _record_at(mem, res, space)
        rid = rec["id"] if rec else res.get("chunk_id")
        event = "ADD" if res["action"] == "appended" else "NONE"
        if event == "ADD":
            history_log.record(mem.cfg.home, "ADD", [rid], None, it.text, space, meta)
        results.append({"id": rid, "memory": it.text, "event": event, "metadata": meta})
    if captured.pending:  # the LLM failed: the turn is kept raw, and listed for a later extraction pass
        capture_policy.mark_pending(mem.cfg.home, space, [r["id"] for r in results], captured.pending)
    return {"results": results}


def _speaker(message: dict) -> str:
    """The label a message is written under: its speaker's name when given (OpenAI's `name`), else its role."""
    for value in (message.get("name"), message.get("role")):
        if isinstance(value, str) and value.strip() and len(value) <= 64 and "*" not in value \
                and ":" not in value and "\n" not in value:
            return " ".join(value.split())
    return ""


def _record_at(mem, res: dict, space: str | None) -> dict | None:
    """The indexed memory holding the lines add wrote (None when indexing is behind)."""
    found = mem.get(f"{res['uri']}:{res['start_line']}-{res['end_line']}", space=space, scope=SCOPE)
    line = res["start_line"]
    return next((r for r in found.get("records", []) if r["start_line"] <= line <= r["end_line"]), None)


# a filter read after ranking keeps what the ranking found: ask for this many times the hits wanted, and as many
# times more again until enough pass or the search has no more to give
OVERFETCH = 5


def read_down(ranking, want: int, keeps, filtered: bool) -> tuple[list, list]:
    """(the last read, its first `want` rows that `keeps`): `ranking(n)` reads the best n, each read OVERFETCH
    times the last (when `filtered`) until enough pass or a read comes back short (nothing more to give)."""
    asked = want * OVERFETCH if filtered else want
    while True:
        rows = ranking(asked)
        kept = [r for r in rows if keeps(r)][:want]
        if len(kept) >= want or len(rows) < asked:
            return rows, kept
        asked *= OVERFETCH


def ranked(mem, body: dict, query: str, space: str | None, limit: int) -> list:
    """Hybrid search inside one space, `threshold`, `shared` and `now` from the body; it counts no access (the
    caller counts the hits it hands out)."""
    threshold = validation.threshold(body.get("threshold"))
    shared = validation.shared(body.get("shared"))  # mdmem's: the notes outside every space join the ranking
    return mem.search(query, scope=SCOPE, limit=limit, min_score=threshold, bump=False, space=space,
                      spaces=[""] if shared and space else None,
                      now=body.get("now"))  # time words (last week) count from this day; default today


def items(hits: list, body: dict, space: str | None, key: str | None) -> list[dict]:
    """Hits in mem0's shape (with `shared`, each names the space it was found in)."""
    shared = validation.shared(body.get("shared"))
    return [item({**h.to_dict(), "text": h.content}, space_of(h.uri) if shared else space, key, score=h.score)
            for h in hits]


def list_all(mem, query: dict) -> dict:
    """GET /memories: the space's newest memories, newest first."""
    space, key = owner(query)
    return {"results": newest(mem, space, key, top_k(query.get("top_k", query.get("limit")), 100, most=MAX_LIST))}


def newest(mem, space: str | None, key: str | None, limit: int = MAX_LIST) -> list[dict]:
    return [item(r, space, key) for r in mem.recent(limit=limit, scope=SCOPE, space=space)]


def get(mem, memory_id: str, scope: str = SCOPE) -> dict:
    """GET /memories/{id}: the memory as its note holds it now (scope: the stores looked in; the page's own
    routes look in the project store too)."""
    space = mem.locate(memory_id, scope=scope)
    return item(mem.get(memory_id, space=space, scope=scope), space, None)


def update(mem, memory_id: str, body, scope: str = SCOPE) -> dict:
    """PUT /memories/{id}: new text and/or metadata in place (date, speaker and counters kept); the id keeps
    naming the memory, as mem0's does (the record's own id changes with its text: `current_id`)."""
    body = body_object(body, '{"text": "Prefers green tea"}')
    text = body.get("text", body.get("data"))
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise InputError('text must be the memory\'s new text, e.g. {"text": "Prefers green tea"}')
    if text is None and "metadata" not in body:
        raise InputError('give the new "text", the new "metadata", or both, e.g. {"text": "Prefers green tea"}')
    space = mem.locate(memory_id, scope=scope)
    old = mem.get(memory_id, space=space, scope=scope)
    before, old_meta = item_metadata.split(old["text"])
    meta = item_metadata.checked(body["metadata"]) if "metadata" in body else old_meta
    new_text = text.strip() if text is not None else mem0_text(before)
    res = mem.update(memory_id, new_text + ("\n" + item_metadata.line_of(meta) if meta else ""), space=space)
    history_log.record(mem.cfg.home, "UPDATE", [memory_id, old["id"], res.get("id")], mem0_text(before), new_text,
                       space, meta)
    now = mem.get(res["id"], space=space, scope=scope) if res.get("id") else old
    return {**item({**now, "id": memory_id}, space, None), "message": "Memory updated successfully!",
            "current_id": res.get("id")}


def delete(mem, memory_id: str, scope: str = SCOPE) -> dict:
    """DELETE /memories/{id}: the memory's lines leave its note and the index."""
    space = mem.locate(memory_id, scope=scope)
    gone = mem.forget(memory_id, space=space)
    text, meta = item_metadata.split(gone.get("text", ""))
    history_log.record(mem.cfg.home, "DELETE", [memory_id, gone.get("id")], mem0_text(text), None, space, meta)
    return {"message": "Memory deleted successfully"}


def restore(mem, memory_id: str, scope: str = SCOPE) -> dict:
    """POST /memories/{id}/restore: a deleted (or updated) memory's old text back where it was, from the trash."""
    space = next((e["space"] for st in mem.stores(scope) if (e := trash_files.find(st.root, memory_id))), None)
    res = mem.restore(memory_id, space=space)
    text, meta = item_metadata.split(res["text"])
    history_log.record(mem.cfg.home, "ADD", [memory_id, res.get("id")], None, mem0_text(text), space, meta)
    return {"id": res.get("id"), "memory": mem0_text(text), "restored_from": memory_id, "user_id": space,
            "message": "Memory restored successfully"}


def delete_all(mem, query: dict) -> dict:
    """DELETE /memories?user_id=…: every memory of that space leaves its notes (never the notes outside spaces)."""
    space, _key = owner(query)
    if space is None:
        raise InputError("name whose memories to delete: user_id, agent_id or run_id (the notes outside spaces "
                         "are yours and are never deleted over HTTP)")
    return {"message": deleted_message(forget_space(mem, space))}


def forget_space(mem, space: str) -> tuple[int, list[str]]:
    """Forget every memory of one space: (how many, why each one left in its note was kept)."""
    count, kept = 0, []
    for rec in mem.recent(limit=MAX_LIST, scope=SCOPE, space=space):
        try:
            delete(mem, rec["id"])
        except NotFoundError:
            continue  # deleted meanwhile
        except (InputError, ConflictError) as exc:  # several items in one record, or edited since indexed
            kept.append(str(exc))
            continue
        count += 1
    return count, kept


def deleted_message(result: tuple[int, list[str]]) -> str:
    count, kept = result
    return f"Memories deleted successfully! ({count} memories)" + (
        f"; {len(kept)} kept, to change in the note itself: {kept[0]}" if kept else "")


def reset(mem, _body=None) -> dict:
    """POST /reset: every space's memories are deleted; notes outside spaces/ (a person's own) are kept."""
    for row in mem.spaces(scope=SCOPE):
        forget_space(mem, row["space"])
    return {"message": "All memories reset"}


def history(mem, memory_id: str, scope: str = SCOPE) -> list[dict]:
    """GET /memories/{id}/history: ADD, UPDATE and DELETE events of the memory, oldest first."""
    events = history_log.events(mem.cfg.home, memory_id) or _note_versions(mem, memory_id, scope)
    return [{"id": e["id"], "memory_id": memory_id, "event": e["event"], "old_memory": e["old_memory"],
             "new_memory": e["new_memory"], "user_id": e.get("space"), "metadata": e.get("metadata"),
             "input": [], "categories": [], "is_deleted": e["event"] == "DELETE", "created_at": e["created_at"],
             "updated_at": e["created_at"], "superseded_on": e.get("superseded_on")} for e in events]


def _note_versions(mem, memory_id: str, scope: str) -> list[dict]:
    """A memory no HTTP call changed (written by hand, by `mdmem add`, an import): the versions its note
    shows, the struck-through lines it superseded first (ADD, then an UPDATE for each new value)."""
    space = mem.locate(memory_id, scope=scope)
    out, before = [], None
    for i, v in enumerate(mem.history(memory_id, space=space, scope=scope)["versions"]):
        text = mem0_text(v["text"])
        out.append({"id": v["id"], "event": "ADD" if i == 0 else "UPDATE", "old_memory": before, "new_memory": text,
                    "space": space, "metadata": None, "created_at": v["date"], "superseded_on": v["superseded_on"]})
        before = text
    return out
