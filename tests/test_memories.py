"""get, update and forget of single memories: the note's other lines untouched, refusals when it changed."""

import pytest

from indexer.errors import ConflictError, InputError, NotFoundError
from indexer.index import db, sql

# each memory under its own heading: one record each, however list items are chunked
PREFS = ("---\ntype: preference\n---\n\n# Preferences\n\n## Drinks\n\n- 2025-01-05: I prefer my coffee black, "
         "without sugar or milk.\n\n## Desk\n\n- 2025-02-10: My desk faces the window so the light comes from "
         "the left.\n\n## Editor\n\nNeovim with a light theme; tabs are four spaces wide in every project.\n")


def _hit(mem, query, **kw):
    return mem.search(query, limit=1, **kw)[0]


def _note(mem, uri="user/preference.md"):
    return (mem.cfg.home / uri).read_bytes()


def test_get_reads_the_memory_as_the_note_holds_it_with_date_and_counters(make_memory):
    mem = make_memory({"user/preference.md": PREFS})
    hit = _hit(mem, "coffee without sugar")
    got = mem.get(hit.id)
    assert got["id"] == hit.id and got["store"] == "global" and got["space"] is None
    assert got["text"].endswith("- 2025-01-05: I prefer my coffee black, without sugar or milk.")
    assert got["date"] == "2025-01-05" and got["access_count"] == 1 and got["in_step"] is True
    assert (got["start_line"], got["end_line"]) == (hit.start_line, hit.end_line)
    lines = mem.get("user/preference.md:13")
    assert lines["text"] == "- 2025-02-10: My desk faces the window so the light comes from the left."
    assert [r["start_line"] <= 13 <= r["end_line"] for r in lines["records"]] == [True]
    assert mem.get("user/preference.md#L9-L9")["text"].startswith("- 2025-01-05: I prefer")
    assert mem.get("mdmem://global/user/preference.md")["lines"] == PREFS.count("\n")
    with pytest.raises(NotFoundError, match="search again"):
        mem.get("0123456789abcdef")
    with pytest.raises(InputError, match="not a note path"):
        mem.get("../outside.md")
    with pytest.raises(InputError, match="has 17 lines"):
        mem.get("user/preference.md:40-50")


def test_update_changes_only_the_memory_keeps_stamp_and_counters_and_indexes(make_memory):
    mem = make_memory({"user/preference.md": PREFS.replace("\n", "\r\n")})  # CRLF kept byte for byte
    hit = _hit(mem, "coffee without sugar")
    mem.search("coffee without sugar")  # a second access
    st = mem.stores("global")[0]
    with db.transaction(st.con):
        sql.increment_reinforcement(st.con, [hit.id], 2.0)
    before = _note(mem)
    res = mem.update(hit.id, "I now take my coffee with oat milk.", expected_hash=mem.get(hit.id)["hash"])
    after = _note(mem)
    assert res["action"] == "updated" and res["indexed"] and res["previous_id"] == hit.id
    assert after == before.replace(b"I prefer my coffee black, without sugar or milk.",
                                   b"I now take my coffee with oat milk.")
    new = mem.get(res["id"])
    assert res["hash"] == new["hash"]  # a second update can be checked against the first one's answer
    assert new["text"].endswith("- 2025-01-05: I now take my coffee with oat milk.") and new["date"] == "2025-01-05"
    assert new["access_count"] == 2 and new["reinforcement"] == 2.0  # what it had earned came along
    assert _hit(mem, "oat milk coffee").id == res["id"]
    assert not [h for h in mem.search("black without sugar", mode="fts") if "without sugar" in h.content]


def test_update_refuses_when_the_memory_changed_and_writes_nothing(make_memory):
    mem = make_memory({"user/preference.md": PREFS})
    hit = _hit(mem, "desk window light")
    seen = mem.get(hit.id)["hash"]
    path = mem.cfg.home / "user/preference.md"
    path.write_text(PREFS.replace("faces the window", "faces the wall"), encoding="utf-8")  # an editor, not indexed
    edited = path.read_bytes()
    with pytest.raises(ConflictError, match="changed since"):
        mem.update(hit.id, "My desk is by the door.", expected_hash=seen)
    assert path.read_bytes() == edited
    mem.index()
    with pytest.raises(ConflictError, match="hash differs"):
        mem.forget(hit.id, expected_hash=seen)  # the id still names the memory; its hash says it changed
    fresh = _hit(mem, "desk wall light")
    with pytest.raises(ConflictError, match="hash differs"):
        mem.update(fresh.id, "My desk is by the door.", expected_hash=seen)
    with pytest.raises(InputError, match="GitHub token"):
        mem.update(fresh.id, "token " + "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5")
    assert path.read_bytes() == edited
    masked = mem.update(fresh.id, "my token is " + "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", redact=True)
    assert masked["redacted"] and "ghp_aB3" not in path.read_text(encoding="utf-8")


def test_update_keeps_an_editors_save_elsewhere_in_the_note(make_memory):
    mem = make_memory({"user/preference.md": PREFS})
    hit = _hit(mem, "desk window light")
    path = mem.cfg.home / "user/preference.md"
    path.write_text(PREFS + "\n## Music\n\nQuiet piano while writing.\n", encoding="utf-8")  # saved, not indexed
    mem.update(hit.id, "My desk faces the garden.")
    text = path.read_text(encoding="utf-8")
    assert "faces the garden" in text and "Quiet piano while writing." in text and "coffee black" in text


def test_forget_removes_exactly_the_memory_lines_and_its_index_rows(make_memory):
    mem = make_memory({"user/preference.md": PREFS})
    hit = _hit(mem, "desk window light")
    before = _note(mem).decode()
    res = mem.forget(hit.id)
    assert res["action"] == "forgotten" and res["text"].startswith("- 2025-02-10: My desk")
    assert _note(mem).decode() == before.replace(
        "- 2025-02-10: My desk faces the window so the light comes from the left.\n", "")
    assert "## Desk" in _note(mem).decode()  # the heading is the note's, not the memory's
    assert not [h for h in mem.search("desk window light") if "window" in h.content]
    with pytest.raises(NotFoundError):
        mem.forget(hit.id)


def test_forget_matching_lists_first_and_removes_only_with_yes(make_memory):
    mem = make_memory({"user/preference.md": PREFS})
    listed = mem.forget_matching("coffee sugar milk")
    assert listed["action"] == "would_forget" and listed["count"] >= 1
    assert any("coffee black" in m["text"] for m in listed["memories"])
    assert b"coffee black" in _note(mem)
    done = mem.forget_matching("coffee sugar milk", yes=True)
    assert done["action"] == "forgotten" and any("coffee black" in m["text"] for m in done["memories"])
    assert b"coffee black" not in _note(mem)
    assert b"My desk faces the window" in _note(mem) and b"Neovim with a light theme" in _note(mem)
    assert not any("coffee black" in m["text"] for m in mem.forget_matching("coffee sugar milk")["memories"])


def test_a_record_holding_several_paragraphs_is_not_replaced_by_one_text(make_memory):
    doc = ("# Trip\n\nWe took the night train from Beijing to Xi'an and slept well.\n\n"
           "The terracotta army was larger than the photos suggest.\n")
    mem = make_memory({"notes/trip.md": doc})
    hit = _hit(mem, "night train terracotta")
    with pytest.raises(InputError, match="separate items"):
        mem.update(hit.id, "We flew.")
    with pytest.raises(InputError, match="separate items"):
        mem.forget(hit.id)
    res = mem.forget_matching("night train terracotta", yes=True)
    assert res["count"] == 0 and [s["id"] for s in res["skipped"]] == [hit.id]
    assert (mem.cfg.home / "notes/trip.md").read_text(encoding="utf-8") == doc


def test_a_daemon_reader_edits_through_the_stores_writer(writer_daemon):
    """Under the daemon, update and forget write the note and leave every index write to the writer."""
    from indexer.daemon.jobs import Job
    daemon, writer, home = writer_daemon
    mem = daemon.reader()
    added = mem.add("The harbour master feeds the gulls at dawn", type="fact")
    hit = mem.search("gulls dawn", mode="fts")[0]
    writer.call(Job.ROOT)  # the access count queued by the search is done
    res = mem.update(hit.id, "The harbour master feeds the gulls at noon")
    assert res["indexed"] and res["id"] and res["id"] != hit.id
    fresh = mem.get(res["id"])
    assert fresh["text"].endswith("feeds the gulls at noon") and fresh["access_count"] == 1  # carried by the writer
    gone = mem.forget(res["id"])
    assert gone["indexed"] and "gulls" not in (home / added["uri"]).read_text(encoding="utf-8")
    assert not mem.search("gulls", mode="fts")
    assert mem.stores("global")[0].con.total_changes() == 0  # the reader's connection wrote nothing


def test_an_id_keeps_naming_its_memory_after_updates_editor_edits_moves_and_a_rebuild(make_memory):
    facts = "---\ntype: fact\n---\n\n# Facts\n\n- 2025-03-01: Alex Chen's birthday is November 2.\n" \
            "- 2025-03-02: The staging database runs PostgreSQL 15.\n"
    mem = make_memory({"user/facts.md": facts})
    first = _hit(mem, "Alex birthday").id
    # through mdmem: the id an agent was given finds the updated memory, and can update it again
    mem.update(first, "Alex Chen's birthday is November 3.")
    assert "November 3" in mem.get(first)["text"]
    mem.update(first, "Alex Chen's birthday is November 4.")
    assert "November 4" in mem.get(first)["text"] and mem.get(first)["id"] == _hit(mem, "Alex birthday").id
    # in an editor: a memory written above it moves its lines, and its words change a little
    path = mem.cfg.home / "user/facts.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("# Facts\n\n", "# Facts\n\n- 2025-03-03: The office moved to the fourth floor.\n")
                    .replace("November 4.", "November 4th."), encoding="utf-8")
    mem.index()
    assert mem.get(first)["text"].endswith("Alex Chen's birthday is November 4th.")
    db_id = next(h.id for h in mem.search("PostgreSQL staging", limit=3) if "PostgreSQL" in h.content)
    mem.rebuild()
    assert "November 4th" in mem.get(first)["text"] and "PostgreSQL" in mem.get(db_id)["text"]
    st = mem.stores("global")[0]
    aliases = sql.all_aliases(st.con)
    assert len(aliases) >= 4 and all(sql.chunks_by_ids(st.con, [new]) for _old, new, _at in aliases)  # one hop each
    mem.forget(first)
    with pytest.raises(NotFoundError):
        mem.get(first)
    with db.transaction(st.con):
        assert sql.prune_aliases(st.con) >= 3  # the forgotten memory's old ids
    left = sql.all_aliases(st.con)
    assert first not in {old for old, _new, _at in left} and all(sql.resolve_alias(st.con, old) for old, *_ in left)
    assert "PostgreSQL" in mem.get(db_id)["text"]


def test_a_memory_cut_from_one_note_and_pasted_into_another_keeps_its_id(make_memory):
    mem = make_memory({"user/facts.md": "---\ntype: fact\n---\n\n# Facts\n\n- 2025-03-01: The cat is called Miso.\n"
                                        "- 2025-03-02: The spare key is under the blue pot.\n",
                       "user/home.md": "---\ntype: fact\n---\n\n# Home\n\n- 2025-01-01: The boiler was serviced.\n"})
    key = _hit(mem, "where is the spare key").id  # found once: it has an access to carry
    facts, home = mem.cfg.home / "user/facts.md", mem.cfg.home / "user/home.md"
    line = "- 2025-03-02: The spare key is under the blue pot.\n"
    facts.write_text(facts.read_text(encoding="utf-8").replace(line, ""), encoding="utf-8")
    home.write_text(home.read_text(encoding="utf-8") + line, encoding="utf-8")
    mem.index()
    got = mem.get(key)
    assert got["uri"] == "user/home.md" and got["text"].endswith("under the blue pot.") and got["access_count"] >= 1
