"""What an add, a read and a match say about a memory is true: its id, its updated_at, its aliases, its space."""

from __future__ import annotations

import os
import subprocess

from cli_process import command

FAMILY = ("---\ntype: fact\n---\n# Facts\n\n- 2026-11-01: 我喜欢喝咖啡\n- 2026-11-02: 我女儿叫小美，今年五岁\n"
          "- 2026-11-03: 我儿子在学钢琴\n- 2026-11-04: 我住在杭州\n- 2026-11-05: 我每天早上跑步\n"
          "- 2026-11-06: 我对花生过敏\n- 2026-11-07: 孩子们周末喜欢去公园\n")


def test_every_add_answers_with_the_id_that_gets_it_back(make_memory):
    mem = make_memory()
    res = mem.add("I prefer my coffee black", type="preference")
    assert res["action"] == "appended" and len(res["id"]) == 16
    assert mem.get(res["id"])["text"].endswith("I prefer my coffee black")
    again = mem.add("I prefer my coffee black", type="preference")
    assert again["action"] == "reinforced" and again["id"] == res["id"]


def test_the_command_line_prints_the_id(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MDMEM_EMBEDDER": "none"}
    done = subprocess.run(command("--home", str(home), "--create", "add", "Miso the cat"),
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stdout.split()
    assert said[:2] == ["added", "to"] and said[-2] == "id" and len(said[-1]) == 16
    got = subprocess.run(command("--home", str(home), "get", said[-1]),
                         capture_output=True, text=True, env=env, timeout=120)
    assert "Miso the cat" in got.stdout


def test_reads_never_change_updated_at(make_memory):
    mem = make_memory({"user/fact.md": FAMILY})
    before = mem.get(mem.search("钢琴", bump=False)[0].id)
    mem.search("钢琴")
    mem.recall("我儿子学什么乐器")
    after = mem.get(before["id"])
    assert after["access_count"] >= before["access_count"] + 2
    assert after["updated_at"] == before["updated_at"]


def test_front_matter_aliases_are_searched(make_memory):
    note = "---\ntype: entity\naliases: [Fang Wang, 王芳]\n---\n# Wang Fang\n\nMy manager; prefers email over chat.\n"
    mem = make_memory({"user/people/wang-fang.md": note})
    for query in ("Fang Wang", "王芳"):
        hits = mem.search(query, mode="fts")
        assert hits and hits[0].uri == "user/people/wang-fang.md", query
    assert "Fang Wang" in hits[0].section


def test_forget_match_removes_what_holds_the_words_and_lists_the_rest_as_similar(make_memory):
    mem = make_memory({"user/fact.md": FAMILY})
    res = mem.forget_matching("孩子")
    assert [m["text"][14:] for m in res["memories"]] == ["孩子们周末喜欢去公园"]  # the words as written, no more
    similar = [m["text"] for m in res["similar"]]
    assert any("女儿" in t for t in similar) or any("儿子" in t for t in similar)  # close in meaning: listed apart
    assert len(mem.forget_matching("我")["memories"]) == 6  # every line that holds 我 (not 孩子们…), as asked


def test_space_names_differ_only_by_case_are_one_space(make_memory):
    mem = make_memory()
    first = mem.add("Miso sleeps on the piano", space="Alice")
    assert first["uri"].startswith("spaces/Alice/")
    second = mem.add("Miso eats tuna on Fridays", space="alice")
    assert second["uri"] == first["uri"]
    assert {h.uri for h in mem.search("Miso", space="ALICE")} == {first["uri"]}
    assert mem.get(first["id"], space="alice")["space"] == "Alice"


def test_a_shared_journal_keeps_each_memorys_type_and_importance(make_memory):
    mem = make_memory()
    decision = mem.add("We ship releases on Tuesdays", type="decision", importance=5)
    event = mem.add("Lunch with the design team at the noodle bar", type="episodic")
    assert decision["uri"] == event["uri"] and decision["uri"].startswith("journal/")
    got = {r["id"]: r for r in (mem.get(decision["id"]), mem.get(event["id"]))}
    assert (got[decision["id"]]["type"], got[decision["id"]]["importance"]) == ("decision", 5)
    assert (got[event["id"]]["type"], got[event["id"]]["importance"]) == ("episodic", 3)
    by_type = mem.stats("project")["project"]["by_type"]
    assert by_type.get("decision") == 1 and by_type.get("episodic") == 1
    hit = mem.search("noodle bar lunch", limit=1)[0]
    assert hit.type == "episodic" and "<!--" not in mem.recall("noodle bar lunch")["text"]
