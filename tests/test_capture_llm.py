"""The `llm` capture policy against a recording LLM on loopback: the shipped prompt in the conversation's language,
facts parsed from its JSON; an answer that is no JSON list, an HTTP error or a timeout stores the turn raw and
lists it for a later extraction pass."""

from __future__ import annotations

import json

import pytest

from indexer.capture import llm_extract, policy
from indexer.daemon import mem0_api
from indexer.errors import ProviderError
from model_servers import ChatServer

ZH_TURN = [{"role": "user", "content": "哈哈，对了，我对芒果过敏，下周三要去医院复查。"},
           {"role": "assistant", "name": "小助手", "content": "好的，我记下了。"}]
ZH_FACTS = json.dumps([{"fact": "用户对芒果过敏", "type": "preference", "importance": 4, "speaker": "user"},
                       {"fact": "用户下周三要去医院复查", "type": "decision", "importance": 3}], ensure_ascii=False)


def llm(srv, provider="openai", **more):
    return {"llm": provider, "llm_base_url": srv.url, "llm_model": "stub-chat", "llm_max_retries": 0, **more}


def journal(mem, space: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((mem.cfg.home / "spaces" / space).rglob("*.md")))


def test_facts_are_asked_for_in_chinese_with_the_shipped_prompt_and_stored_as_typed_items(make_memory):
    with ChatServer(ZH_FACTS) as srv:
        mem = make_memory(**llm(srv))
        out = mem0_api.add(mem, {"messages": ZH_TURN, "user_id": "lin", "infer": True})
    system, user = (m["content"] for m in srv.requests[0]["body"]["messages"])
    assert "durable facts" in system and "JSON array" in system and "Chinese" in system
    assert system == llm_extract.prompt().format(language=llm_extract.LANGUAGES[True])
    assert "(new) user: 哈哈，对了，我对芒果过敏" in user and "(new) 小助手: 好的，我记下了。" in user
    assert [(r["memory"], r["event"]) for r in out["results"]] == [("用户对芒果过敏", "ADD"), ("用户下周三要去医院复查", "ADD")]
    notes = journal(mem, "lin")
    assert "**user:** 用户对芒果过敏" in notes and "哈哈" not in notes  # the speaker kept, the chit-chat not stored
    assert policy.pending(mem.cfg.home) == []


def test_an_english_conversation_asks_for_its_own_language_through_ollama_and_takes_json_lines(make_memory):
    reply = '```json\n{"fact": "Sam keeps bees on the roof", "type": "fact", "speaker": "Sam"}\n```'
    with ChatServer(reply) as srv:
        mem = make_memory(**llm(srv, "ollama"))
        out = mem0_api.add(mem, {"messages": [{"role": "user", "name": "Sam", "content": "I keep bees on the roof!"}],
                                 "user_id": "sam", "capture": "llm"})
    req = srv.requests[0]
    assert req["path"] == "/api/chat" and "Chinese" not in req["body"]["messages"][0]["content"]
    assert "the conversation's own language" in req["body"]["messages"][0]["content"]
    assert [r["memory"] for r in out["results"]] == ["Sam keeps bees on the roof"]
    assert "**Sam:** Sam keeps bees on the roof" in journal(mem, "sam")


@pytest.mark.parametrize("reply", ["Sure! Here are the facts: the user likes mangoes.", '{"answer": 42}',
                                   '[{"fact": ""}]', "[1, 2, 3]", ""])
def test_an_answer_that_is_no_list_of_facts_is_refused(reply):
    with pytest.raises(ProviderError):
        llm_extract.parse(reply, {"user"}, "user")


@pytest.mark.parametrize("failure", ["nonsense", "http", "timeout"])
def test_a_failing_llm_never_loses_the_turn_it_is_stored_raw_and_listed_pending(make_memory, failure):
    turn = [{"role": "user", "content": "I moved to Ghent and my cat is called Biscuit."},
            {"role": "assistant", "content": "Lovely!"}]
    with ChatServer("I cannot help with that.") as srv:
        if failure == "http":
            srv.fail_next.append((500, {}, {"error": {"message": "model crashed"}}))
        if failure == "timeout":
            srv.delay_s = 3.0
        mem = make_memory(**llm(srv, llm_timeout_s=0.5))
        out = mem0_api.add(mem, {"messages": turn, "user_id": "ada", "infer": True})
    assert [r["memory"] for r in out["results"]] == [turn[0]["content"], "Lovely!"]  # every message, as raw keeps it
    notes = journal(mem, "ada")
    assert "**user:** I moved to Ghent and my cat is called Biscuit." in notes and "**assistant:** Lovely!" in notes
    marked = policy.pending(mem.cfg.home)
    assert len(marked) == 1 and marked[0]["space"] == "ada" and marked[0]["reason"]
    assert marked[0]["ids"] == [r["id"] for r in out["results"]] and all(marked[0]["ids"])
    assert (mem.cfg.home / policy.PENDING_FILE).stat().st_mode & 0o777 == 0o600
    found = mem.search("Biscuit", space="ada", scope="global")
    assert found and "Biscuit" in found[0].content  # searchable as it was said
