"""GET /memories/{id}/history in mem0's shape: one entry per version of the memory, oldest first."""

from __future__ import annotations

from indexer.daemon.mem0_api import SCOPE, memory_text


def history(mem, memory_id: str) -> list[dict]:
    """The values a memory had, from its note's struck-through lines (ADD, then UPDATE for each new value)."""
    space = mem.locate(memory_id, scope=SCOPE)
    versions = mem.history(memory_id, space=space, scope=SCOPE)["versions"]
    out, before = [], None
    for i, v in enumerate(versions):
        text = memory_text(v["text"])
        out.append({"id": v["id"], "memory_id": memory_id, "old_memory": before, "new_memory": text,
                    "event": "ADD" if i == 0 else "UPDATE", "created_at": v["date"], "is_deleted": False,
                    "current": v["current"], "superseded_on": v["superseded_on"]})
        before = text
    return out
