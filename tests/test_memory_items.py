"""Memory records: one chunk per list item of a memory note, its own metadata, counters that survive edits."""

import json
import os
from datetime import date, datetime, timedelta

import pytest

from indexer.errors import InputError
from indexer.index import db, sql
from indexer.notes.chunker import parse_note
from indexer.retrieval.timespan import bounds

FACTS = """---
type: fact
tags: [family]
---

# Facts

Some words about this note that are long enough to be a section of their own.

- 2026-03-02: 我对海鲜过敏，吃虾会起疹子。 #health
- 2026-03-03: My daughter loves painting <!-- importance: 5 -->
  and draws animals every evening.
  - mostly cats and horses
- An undated preference for window seats on trains.
"""


def lines_of(text, ch):
    return "\n".join(text.split("\n")[ch.start_line - 1:ch.end_line])


def test_each_top_level_item_of_a_memory_note_is_one_record_with_its_own_metadata():
    note = parse_note(FACTS, "user/fact.md")
    memories = [c for c in note.chunks if c.kind == "memory"]
    sections = [c for c in note.chunks if c.kind == "section"]
    assert [(c.start_line, c.end_line) for c in memories] == [(10, 10), (11, 13), (14, 14)]
    assert [lines_of(FACTS, c) for c in memories] == [c.content for c in memories]
    assert "mostly cats" in memories[1].content  # continuation lines and sub-items stay with their item
    assert len(sections) == 1 and sections[0].content.startswith("# Facts\n\nSome words")
    assert [c.date for c in memories] == ["2026-03-02", "2026-03-03", None]  # None: the file's date when indexed
    assert memories[0].tags == ("health",) and memories[1].importance == 5 and memories[0].importance is None
    assert all(c.section == "Facts" for c in memories)


def test_dated_items_make_a_memory_note_without_front_matter_and_chat_turns_do_not():
    journal = "# Journal 2026-03-02\n\n- 09:15: Slept badly again, woke at 3am.\n- 21:40: 今天头有点疼。\n"
    note = parse_note(journal, "journal/2026-03-02.md")
    assert [(c.kind, c.date) for c in note.chunks] == [("memory", "2026-03-02T09:15"), ("memory", "2026-03-02T21:40")]
    dated = parse_note("# Log\n\n- 2025-11-02: moved the backups to the NAS\n- 2025-11-09: replaced a disk\n", "log.md")
    assert [c.kind for c in dated.chunks] == ["memory", "memory"]
    chat = ("# 2023-05-08 · Caroline & Melanie\n\n- **Caroline** (D1:1): Hey Mel! Good to see you! How have you been?\n"
            "- **Melanie** (D1:2): Hey Caroline! I'm swamped with the kids & work. What's up with you?\n")
    chat_note = parse_note(chat, "journal/conv-26/2023-05-08.md")  # journal/ alone does not make a memory note
    assert {c.kind for c in chat_note.chunks} == {"section"} and len(chat_note.chunks) == 1
    assert chat_note.chunks[0].date == "2023-05-08"
    plain = parse_note("# Shopping\n\n- eggs and flour for the cake\n- candles\n", "lists/shopping.md")
    assert {c.kind for c in plain.chunks} == {"section"}
    fm_day = parse_note("---\ntype: decision\ndate: 2025-12-01\n---\n- Use SQLite for the index.\n", "agent/d.md")
    assert [(c.kind, c.date) for c in fm_day.chunks] == [("memory", "2025-12-01")]


def test_a_memory_without_a_date_has_none_and_search_explain_says_memory(make_memory, tmp_path):
    """An undated item is not given the file's day: a copy or an edit would invent its date."""
    mem = make_memory(global_notes={"user/fact.md": FACTS, "docs/guide.md": "# Guide\n\nThe backup guide explains restores.\n"},
                      index=False)
    path = mem.cfg.home / "user" / "fact.md"
    old = datetime(2024, 6, 1, 12).timestamp()
    os.utime(path, (old, old))
    mem.index()
    hits = {h.content.split("\n")[0]: h for h in mem.search("window seats trains", explain=True, limit=3)}
    seat = next(h for k, h in hits.items() if "window seats" in k)
    assert seat.kind == "memory" and seat.date is None and seat.explain["record"] == "memory"
    assert seat.to_dict()["date"] is None and "2024-06-01" not in seat.content
    guide = mem.search("backup guide restores", explain=True, limit=1)[0]
    assert guide.explain["record"] == "section" and guide.kind == "section"
    st = mem.stats()["global"]
    assert (st["memories"], st["sections"]) == (3, 2)
    row = next(r for r in sql.chunks_for_uri(mem.stores("global")[0].con, "user/fact.md") if r["start_line"] == 10)
    assert json.loads(row["tags"]) == ["family", "health"]  # the note's tags and the item's own
    assert next(r for r in sql.chunks_for_uri(mem.stores("global")[0].con, "user/fact.md")
                if r["start_line"] == 11)["importance"] == 5


def _counts(st, uri):
    return {r["content"].split(": ", 1)[-1]: (r["access_count"], r["reinforcement"])
            for r in sql.chunks_for_uri(st.con, uri)}


def _touch_all(st, uri):
    rows = sql.chunks_for_uri(st.con, uri)
    with db.transaction(st.con):
        for n, r in enumerate(rows, 1):
            for _ in range(n):
                sql.increment_access_count(st.con, [r["id"]])
            sql.increment_reinforcement(st.con, [r["id"]], 2.0)
    return _counts(st, uri)


ITEMS = ["I take the 7:40 train to work on weekdays.", "My sister Ana lives in Lisbon with two cats.",
         "The wifi password at the cabin is on the fridge.", "I am training for a half marathon in May.",
         "Our landlord prefers to be called in the evening."]


def _note(items):
    return "---\ntype: fact\n---\n\n# Facts\n\n" + "".join(f"- 2026-01-{len(t) % 28 + 1:02d}: {t}\n" for t in items)


def _write(mem, uri, text):
    path = mem.cfg.home / uri
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a save within the same tick still counts


def test_counters_survive_edits_reorders_and_moves(make_memory):
    mem = make_memory(global_notes={"user/facts.md": _note(ITEMS), "user/other.md": _note(["A placeholder fact."])})
    st = mem.stores("global")[0]
    before = _touch_all(st, "user/facts.md")
    # one memory edited in place: every other keeps its counters, the edited one keeps its own
    edited = ITEMS[:1] + ["My sister Ana lives in Porto with two cats."] + ITEMS[2:]
    _write(mem, "user/facts.md", _note(edited))
    mem.index()
    after = _counts(st, "user/facts.md")
    assert after["My sister Ana lives in Porto with two cats."] == before[ITEMS[1]]
    assert all(after[t] == before[t] for t in ITEMS if t != ITEMS[1])
    # a new memory on top shifts every line; a paraphrase moves to the end: counters stay with their text
    para = "I'm preparing for a half marathon this May."
    reordered = ["A brand new memory about the garden."] + [t for t in edited if t != ITEMS[3]] + [para]
    _write(mem, "user/facts.md", _note(reordered))
    mem.index()
    again = _counts(st, "user/facts.md")
    assert again[para] == before[ITEMS[3]]
    assert again["A brand new memory about the garden."] == (0, 0)
    assert again[ITEMS[0]] == before[ITEMS[0]] and again[ITEMS[4]] == before[ITEMS[4]]
    # a memory cut from one note and pasted into another keeps its counters
    _write(mem, "user/facts.md", _note([t for t in reordered if t != ITEMS[2]]))
    _write(mem, "user/other.md", _note(["A placeholder fact.", ITEMS[2]]))
    mem.index()
    assert _counts(st, "user/other.md")[ITEMS[2]] == before[ITEMS[2]]
    assert ITEMS[2] not in _counts(st, "user/facts.md")


def test_since_until_filter_on_the_memory_date_and_recent_lists_newest(make_memory):
    today = date.today()
    days = [today - timedelta(days=n) for n in (400, 40, 10, 1)]
    text = "---\ntype: fact\n---\n\n" + "".join(f"- {d.isoformat()}: bicycle repair note number {i}\n"
                                                for i, d in enumerate(days))
    mem = make_memory(global_notes={"user/bikes.md": text})
    every = mem.search("bicycle repair note", limit=10)
    assert len(every) == 4
    recent = mem.search("bicycle repair note", limit=10, since="2w")
    assert sorted(h.date for h in recent) == sorted(d.isoformat() for d in days[2:])
    window = mem.search("bicycle repair note", limit=10, since=days[1].isoformat(), until=days[2].isoformat())
    assert sorted(h.date for h in window) == [days[1].isoformat(), days[2].isoformat()]
    assert [h.date for h in mem.search("bicycle repair note", mode="vector", until="1y")] == [days[0].isoformat()]
    block = mem.recall("bicycle repair", since="3m")
    assert block["memories"] and all(m["date"] >= days[1].isoformat() for m in block["memories"])
    newest = mem.recent(limit=2)
    assert [m["date"] for m in newest] == [days[3].isoformat(), days[2].isoformat()]
    for bad in ("yesterday", "7x", "2026-13-01"):
        with pytest.raises(InputError, match=r"--since .* a day such as 2026-03-01"):
            mem.search("bicycle", since=bad)
    with pytest.raises(InputError, match="after --until"):
        bounds("2026-03-05", "2026-03-01")


def test_recall_packs_whole_memories_and_skips_one_that_does_not_fit(make_memory):
    long = "the quarterly garden plan covers " + ", ".join(f"bed {i} with tomatoes and basil" for i in range(12))
    text = ("---\ntype: fact\n---\n\n- 2026-02-01: " + long + "\n- 2026-02-02: the garden hose is in the shed\n"
            "- 2026-02-03: garden gloves are in the blue box by the door\n")
    mem = make_memory(global_notes={"user/garden.md": text})
    out = mem.recall("garden plan tomatoes basil hose gloves", max_chars=300)
    assert out["memories"] and len(out["text"]) <= 300
    assert "…" not in out["text"] and all("quarterly" not in m["text"] for m in out["memories"])
    for m in out["memories"]:
        assert m["line"].startswith(f"- [{m['date']}] ") and f"(source: user/garden.md#L{m['start_line']})" in m["line"]
    wide = mem.recall("quarterly garden plan tomatoes basil", max_chars=1500)
    assert wide["memories"][0]["text"].startswith("the quarterly garden plan") and "…" not in wide["text"]


def test_decay_ages_a_memory_from_its_own_date(make_memory):
    old, new = (date.today() - timedelta(days=300)).isoformat(), date.today().isoformat()
    text = f"---\ntype: fact\n---\n\n- {old}: the old ferry timetable\n- {new}: the new ferry timetable\n"
    mem = make_memory(global_notes={"notes/ferry.md": text})
    mem.decay()
    rows = {r["memory_date"]: r["strength"] for r in sql.chunks_for_uri(mem.stores("global")[0].con, "notes/ferry.md")}
    assert rows[old] < 0.01 < 0.95 < rows[new]


def test_an_index_of_schema_1_is_migrated_and_re_chunked_by_the_next_index(make_memory):
    mem = make_memory(global_notes={"user/fact.md": FACTS})
    st = mem.stores("global")[0]
    path = st.index_path
    mem.close()
    con = db.connect(path)
    with db.transaction(con):
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        con.execute("UPDATE meta SET value = 'md-blocks-3' WHERE key = 'chunker'")
        con.execute("DELETE FROM meta WHERE key = 'chunking'")  # as an index of the old chunker has it
    con.close()
    report = mem.index("global")[0]
    assert report.indexed == 1 and report.embedded == 0  # read again, every vector reused
    assert mem.stats()["global"]["memories"] == 3
    assert mem.search("海鲜", limit=1)[0].kind == "memory"
    assert mem.index("global")[0].indexed == 0  # recorded: the next sync is incremental again


def test_a_note_emptied_then_written_again_reuses_its_vectors_and_counters(make_memory, counting):
    mem = make_memory(global_notes={"user/facts.md": _note(ITEMS)}, embedder=counting)
    st = mem.stores("global")[0]
    before = _touch_all(st, "user/facts.md")
    embedded = counting.documents
    _write(mem, "user/facts.md", "")  # an editor that truncates before it writes, seen half-way
    mem.index()
    assert sql.chunks_for_uri(st.con, "user/facts.md") == []
    _write(mem, "user/facts.md", _note(ITEMS))
    mem.index()
    assert counting.documents == embedded  # nothing embedded again
    assert _counts(st, "user/facts.md") == before


def test_the_model_reads_a_lead_in_and_headings_for_the_list_they_introduce():
    from indexer.notes.memory_items import text_to_embed
    zh = "## 根本原因\n\n根本原因有两个：\n\n1. 迁移不在事务里。\n2. 没有互斥。"
    en = "The causes were two:\n- no transaction\n  (autocommit)\n- no lock"
    assert text_to_embed(zh, "section") == "## 根本原因\n\n根本原因有两个："
    assert text_to_embed(en, "section") == "The causes were two:"
    for whole in ("Intro.\n\nTwo causes:\n\n1. a\n2. b", "Two causes:\n\n1. a\n\nAnd a paragraph after it.",
                  "No colon here.\n\n1. a", "## Only a heading\n\n1. a"):
        assert text_to_embed(whole, "section") == whole
