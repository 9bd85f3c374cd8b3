"""Consolidation that proposes: a space's old journal days become one proposed summary per week in the review queue.

Days older than `consolidate_after_days` are summarised; accepting one writes the summary note with links to the
originals, which are never touched."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path, PurePosixPath

from indexer.errors import InputError, MdmemError
from indexer.index import sql
from indexer.index.stores import Store
from indexer.memories.get import recent_records
from indexer.notes import decision_log
from indexer.notes.append import append_entry, strip_item
from indexer.notes.edit_lines import note_target
from indexer.notes.spaces import space_uri
from indexer.notes.struck_lines import marked

MAX_ITEMS = 100_000  # memories read per space and store: far more than a person's journal holds
FOLDER = "summaries"


def propose(stores: list[Store], today: date, after_days: float, log, summarise=None) -> dict:
    """One proposal per (store, space, ISO week) of journal memories dated more than after_days before today that
    has none yet (pending, accepted or rejected alike: a rejected week is not asked again). `summarise(lines)`
    (the LLM) may write the summary; without it, or when it fails, the proposal is the week's memories grouped
    by type and dated (a digest: nothing is made up, nothing is left out). `log(store, event)` writes it."""
    cutoff = (today - timedelta(days=after_days)).isoformat()
    made = []
    for st in stores:
        done = {(e.get("space"), e.get("week")) for e in decision_log.entries(st.root) if e["action"] == "proposed"}
        for space in [None, *(r["space"] for r in sql.memories_by_space(st.con))]:
            weeks: dict[str, list[dict]] = {}
            for rec in recent_records([st], MAX_ITEMS, space=space, span=(None, cutoff)):
                if rec["uri"].startswith(space_uri(space, "journal/")) and rec["date"] and not marked(rec["text"]):
                    weeks.setdefault(_week(rec["date"][:10]), []).append(rec)
            for week, recs in sorted(weeks.items()):
                if (space, week) in done:
                    continue
                recs.sort(key=lambda r: (r["date"], r["uri"], r["start_line"]))
                text, by = _summary(week, recs, space, summarise)
                event = {"id": decision_log.new_id(), "action": "proposed", "space": space, "week": week,
                         "text": text, "by": by, "review": True,
                         "uri": space_uri(space, f"{FOLDER}/{week}.md"),
                         "sources": [{"id": r["id"], "uri": r["uri"], "start_line": r["start_line"]} for r in recs],
                         "reason": f"{len(recs)} journal memories of {week} are older than {after_days:g} days: "
                                   f"a {'summary' if by == 'llm' else 'digest'} is proposed, the originals stay"}
                log(st.name, event)
                made.append({k: event[k] for k in ("id", "space", "week", "uri")} | {"store": st.name,
                                                                                     "memories": len(recs)})
    return {"proposed": len(made), "proposals": made}


def _week(day: str) -> str:
    y, w, _ = date.fromisoformat(day).isocalendar()
    return f"{y}-W{w:02d}"


def _summary(week: str, recs: list[dict], space: str | None, summarise) -> tuple[str, str]:
    """The proposed note's text and who wrote it ("llm" or "rules")."""
    monday = date.fromisocalendar(int(week[:4]), int(week[6:]), 1)
    head = f"# Week {week} ({monday.isoformat()} – {(monday + timedelta(days=6)).isoformat()})\n\n"
    items = [f"{r['date'][:10]}: {strip_item(r['text'].split(chr(10))[0])}" for r in recs]
    sources = "\n".join(f"- {item} ([{r['uri']}:{r['start_line']}]({_link(space, r['uri'])}))"
                        for item, r in zip(items, recs))
    if summarise is not None:
        try:
            said = summarise(items).strip()
        except MdmemError:  # the LLM's failure never loses the proposal: the digest is made instead
            said = ""
        if said:
            return f"{head}{said}\n\n## Sources\n\n{sources}\n", "llm"
    groups: dict[str, list[str]] = {}
    for item, r in zip(items, recs):
        groups.setdefault(r["type"] or "episodic", []).append(f"- {item} ([{r['uri']}:{r['start_line']}]"
                                                             f"({_link(space, r['uri'])}))")
    body = "\n\n".join(f"## {kind}\n\n" + "\n".join(lines) for kind, lines in sorted(groups.items()))
    return (f"{head}The week's {len(recs)} journal memories, grouped by type, as written (a digest: no model "
            f"summarised them). The originals stay where they are.\n\n{body}\n"), "rules"


def _link(space: str | None, uri: str) -> str:
    """The source note as a link relative to the summaries folder."""
    here = PurePosixPath(space_uri(space, FOLDER))
    return "../" * len(here.parts) + uri


def write_summary(store: Store, entry: dict, text: str) -> tuple[Path, str]:
    """The summary note written (a new file next to any of the same week), never over another note."""
    uri = entry["uri"]
    target = note_target(store.name, store.root, uri)
    n = 1
    while target.path.exists():
        n += 1
        if n > 99:
            raise InputError(f"{uri}: too many summaries of this week already; move some away")
        uri = entry["uri"][:-3] + f"-{n}.md"
        target = note_target(store.name, store.root, uri)
    append_entry(target, text if text.endswith("\n") else text + "\n", "")
    return target.path, uri
