"""The later pass: each turn the LLM failed on (policy.pending) is extracted again; on success its facts are added
and its raw lines moved to the trash (restorable), a turn failing GIVE_UP_AFTER times is left raw for good."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.capture import llm_extract, policy
from indexer.errors import InputError, MdmemError, NotFoundError
from indexer.notes.append import strip_item

SCOPE = "global"  # capture writes through mem0's API, whose memories are the global store's
GIVE_UP_AFTER = 5  # failed passes on one turn (the first failure at capture not counted): its raw lines stay
_PASS = threading.Lock()  # one pass at a time per process; mark_pending only appends meanwhile


def extract_pending(mem) -> dict:
    """Run the pass with mem (a Memory: get, add, forget, cfg); without an LLM it does nothing, keeps the list."""
    home = Path(mem.cfg.home)
    if not mem.cfg.llm:
        return {"pending": len(policy.pending(home)), "extracted": 0, "failed": 0, "given_up": 0, "skipped": 0,
                "raw_kept": 0}
    with _PASS:
        entries = policy.pending(home)
        kept, counts, trash = [], {"extracted": 0, "failed": 0, "given_up": 0, "skipped": 0, "raw_kept": 0}, []
        for entry in entries:
            outcome, entry_out, raw = _one(mem, entry)
            counts[outcome] += 1
            trash += raw
            if entry_out is not None:
                kept.append(entry_out)
        # bottom lines first: forgetting a line shifts those below it, whose ids carry their line numbers
        for rec in sorted(trash, key=lambda r: (r["uri"], -r["start_line"])):
            try:
                mem.forget(rec["id"], space=rec["space"] or None)
            except MdmemError:  # changed meanwhile: the raw line stays beside its facts, nothing lost
                counts["raw_kept"] += 1
        policy.rewrite_pending(home, len(entries), kept)
    return {"pending": len(policy.pending(home)), **counts}


def _one(mem, entry: dict) -> tuple[str, dict | None, list[dict]]:
    """(outcome, the entry to keep or None, the raw records to move to the trash) of one pending turn."""
    space = entry.get("space")
    records = []
    for rid in entry.get("ids") or []:
        try:
            rec = mem.get(rid, space=space)
        except (NotFoundError, InputError):
            continue  # forgotten since (or no id at all): never brought back
        if rec["id"] == rid and rec.get("in_step", True):  # get follows an edited id to its new text: the user's
            records.append(rec)
    if not records:
        return "skipped", None, []
    turns = [_turn(r["text"]) for r in records]
    try:
        items = llm_extract.extract(mem.cfg, turns)
        twins = _add(mem, items, space)
    except MdmemError as exc:  # the LLM, or an add refusing a fact (a secret in it): tried again next pass
        tries = int(entry.get("tries", 0)) + 1
        if tries >= GIVE_UP_AFTER:
            return "given_up", None, []
        return "failed", {**entry, "ids": [r["id"] for r in records], "tries": tries, "reason": str(exc)}, []
    # a fact that reinforced a raw line lives in that line: it stays
    return "extracted", None, [r for r in records if r["id"] not in twins]


def _add(mem, items, space) -> set[str]:
    """Add the facts as mem0's capture writes them; the ids of memories they reinforced instead."""
    twins = set()
    for it in items:
        res = mem.add(f"**{it.speaker}:** {it.text}" if it.speaker else it.text, type=it.type,
                      importance=it.importance, scope=SCOPE, space=space)
        if res.get("action") == "reinforced":
            twins.add(res.get("id"))
    return twins


def _turn(text: str) -> tuple[str, str, str]:
    """(role, speaker, text) of a raw line as capture wrote it (`- 14:03: **Mira:** …`)."""
    said, labelled = strip_item(text), strip_item(text, keep_speaker=True)
    speaker = labelled[:-len(said) - 2] if labelled != said and labelled.endswith(": " + said) else ""
    return speaker or "user", speaker, said
