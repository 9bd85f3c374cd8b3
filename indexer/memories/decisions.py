"""What `add` decided on its own, logged with its reason and undoable; the review queue of the unsure ones
(accept keeps, reject undoes, edit rewrites the memory) and of consolidation's proposals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from indexer import validation
from indexer.errors import InputError, MdmemError, NotFoundError
from indexer.index.stores import Store
from indexer.notes import decision_log
from indexer.notes.spaces import in_space

ACTIONS = ("list", "log", "accept", "reject", "edit", "undo")
FINAL = ("accepted", "rejected", "edited", "undone")


@dataclass(frozen=True)
class Ops:
    """What undoing and resolving need of a `Memory` (memories/ cannot import it)."""
    log: Callable  # (store, event): through the store's writer
    update: Callable  # (id, text, space, keep) -> update's answer
    forget: Callable  # (id, space) -> forget's answer
    append: Callable  # (text, args) -> add's answer, never a reinforcement
    reinforce: Callable  # (store, id, by=1.0): by -1.0 takes a restatement back
    write_summary: Callable  # (store, entry, text) -> where the summary note went
    supersede: Callable  # (old id, new id, space) -> supersede.mark_old's answer
    restore: Callable  # (trash id, space) -> restore's answer
    get: Callable  # (id, space) -> get's answer


def log_add(res: dict, text: str, args: dict, log, judge=None, ops: Ops | None = None) -> dict:
    """Log the decision an add made (reinforced, superseded, kept beside a near one), the unsure ones queued;
    the answer says so under "decision". A plain append decided nothing and is not logged. With `judge` (the
    LLM's ADD / UPDATE / NONE) a near one is decided by it instead of waiting, and `ops` carries it out."""
    near, sup = res.pop("near", None), res.get("superseded")
    store, space = res.get("store"), args.get("space")
    base = {"id": decision_log.new_id(), "space": space, "text": text, "memory_id": res.get("id"), "args": args}
    if res.get("action") == "reinforced":
        event = {**base, "action": "reinforced", "similarity": res.get("similarity"),
                 "reason": f"restates {res['id']} (same words, cosine {res.get('similarity')}): reinforced, no new line"}
    elif sup is not None and "weak" in sup:
        how = "opening words alone, weakly" if sup["weak"] else "the same words around a new value"
        event = {**base, "action": "superseded", "old_id": sup["id"], "old_text": sup["text"],
                 "similarity": sup["similarity"], "review": bool(sup["weak"]),
                 "reason": f"gives a new value for {sup['previous_id']} \u201c{sup['text']}\u201d ({how}, cosine "
                           f"{sup['similarity']}): the old line struck through"}
    elif near is not None and res.get("id"):
        event = {**base, "action": "kept", "near_id": near["id"], "near_store": near["store"],
                 "near_text": near["text"], "similarity": near["similarity"], "review": True,
                 "reason": f"close to {near['id']} \u201c{near['text']}\u201d (cosine {near['similarity']}) with other "
                           "words: kept as a new memory"}
        if judge is not None and ops is not None:
            event, res = _judged(event, res, judge, ops)
    else:
        return res
    log(store, event)
    return {**res, "decision": {k: event.get(k) for k in ("id", "action", "reason")} | {"review": bool(event.get("review"))}}


def _judged(event: dict, res: dict, judge, ops: Ops) -> tuple[dict, dict]:
    """The near memory decided by the LLM: ADD keeps both, UPDATE strikes the near one through, NONE moves the
    new one to the trash and reinforces the near one; an LLM that cannot say leaves it waiting for review."""
    try:
        verdict = judge(event["near_text"], event["text"])
    except MdmemError as exc:
        return {**event, "reason": f"{event['reason']}; the LLM could not decide ({exc})"}, res
    said = f"the LLM said {verdict} beside {event['near_id']} \u201c{event['near_text']}\u201d (cosine {event['similarity']})"
    if verdict == "ADD":
        return {**event, "review": False, "by": "llm", "reason": f"{said}: kept as a new memory"}, res
    if verdict == "UPDATE":
        done = ops.supersede(event["near_id"], event["memory_id"], event["space"])
        return ({**event, "action": "superseded", "old_id": done["id"], "old_text": done["text"], "review": False,
                 "by": "llm", "reason": f"{said}: the old line struck through"}, {**res, "superseded": done})
    _merged_into_near(ops, event, event["space"])
    twin = ops.get(event["near_id"], event["space"])
    return ({**event, "action": "merged", "review": False, "by": "llm",
             "reason": f"{said}: the new line moved to the trash, the stored one reinforced"},
            {**res, **{k: twin[k] for k in ("id", "uri", "store", "start_line", "end_line")}, "action": "reinforced",
             "chunk_id": twin["id"], "similarity": event["similarity"], "reinforcement": twin.get("reinforcement")})


def listing(stores: list[Store], space: str | None, everything: bool) -> dict:
    """The review queue (pending entries), or with everything the whole decision log; newest first."""
    out = [{**_public(e), "store": st.name} for st, e in _all(stores, space)
           if everything or e["status"] == "pending"]
    out.sort(key=lambda e: e.get("at") or "", reverse=True)
    return {"count": len(out), "entries": out}


def resolve(action: str, ref: str | None, text: str | None, stores: list[Store], space: str | None, ops: Ops) -> dict:
    """accept (keep the decision; a proposal's note is written), reject or undo (undo the decision), edit (the
    memory, or the proposal's summary, rewritten to text)."""
    validation.choice("action", action, ACTIONS)
    st, entry = _find(stores, ref, space)
    if entry["status"] in FINAL:
        raise InputError(f"decision {entry['id']} was {entry['status']} already ({entry.get('resolved_at')}); "
                         "`mdmem review --all` lists the log")
    out: dict = {}
    if action == "accept":
        out = ops.write_summary(st.name, entry, entry["text"]) if entry["action"] == "proposed" else {}
        status = "accepted"
    elif action == "edit":
        text = validation.text("text", text, '"I prefer green tea"')
        out = ops.write_summary(st.name, entry, text) if entry["action"] == "proposed" else \
            ops.update(entry["memory_id"], text, entry.get("space"), True)
        status = "edited"
    else:
        out = undo(entry, ops, st.name)
        status = "rejected" if action == "reject" else "undone"
    ops.log(st.name, {"id": entry["id"], "status": status, **({"text": text} if action == "edit" else {})})
    return {"id": entry["id"], "action": entry["action"], "status": status, "result": out}


def undo(entry: dict, ops: Ops, store: str) -> dict:
    """Put things back as they were before the decision: the line a reinforcement did not write is written and
    the memory it restated counts one restatement less, a struck line is current again, a near memory kept apart
    goes to the trash and reinforces the one it is near, a merged line comes back and its twin counts one less."""
    kind, space = entry["action"], entry.get("space")
    if kind == "reinforced":
        restated = _taken_back(ops, store, entry["memory_id"], space)
        return {**ops.append(entry["text"], entry.get("args") or {}), **restated}
    if kind == "superseded":
        return ops.update(entry["old_id"], entry["old_text"], space, False)
    if kind == "kept":
        return _merged_into_near(ops, entry, space)
    if kind == "merged":  # the LLM's NONE: the new line back from the trash
        restated = _taken_back(ops, entry.get("near_store") or store, entry["near_id"], space)
        return {**ops.restore(entry["memory_id"], space), **restated}
    return {}  # a proposal wrote nothing: rejecting it only closes it


def _merged_into_near(ops: Ops, entry: dict, space: str | None) -> dict:
    """The new memory to the trash and the near one it restates reinforced (the LLM's NONE, undoing a "kept");
    what forget answered."""
    gone = ops.forget(entry["memory_id"], space)
    ops.reinforce(entry["near_store"], entry["near_id"])
    return gone


def _taken_back(ops: Ops, store: str, memory_id: str, space: str | None) -> dict:
    """The restatement a decision counted on a memory, taken back (the memory as it is now: edits change ids);
    {"restated": {"id", "reinforcement"}}, or nothing when that memory is gone."""
    try:
        twin = ops.get(memory_id, space)
    except NotFoundError:
        return {}
    count = ops.reinforce(twin.get("store") or store, twin["id"], -1.0)
    return {"restated": {"id": twin["id"], "reinforcement": count}}


def _all(stores: list[Store], space: str | None):
    for st in stores:
        for e in decision_log.entries(st.root):
            if space is None or e.get("space") == space or in_space(e.get("uri") or "", space):
                yield st, e


def _find(stores: list[Store], ref: str | None, space: str | None) -> tuple[Store, dict]:
    ref = validation.text("id", ref, "3f9a0c1d2e4b")
    found = next(((st, e) for st, e in _all(stores, space) if e["id"] == ref.strip()), None)
    if found is None:
        raise NotFoundError(f"no decision with id {ref} in the log; `mdmem review --all` lists them")
    return found


def _public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k != "args"}
