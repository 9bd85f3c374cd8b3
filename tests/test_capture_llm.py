"""The `llm` capture policy against a recording LLM on loopback: the shipped prompt in the conversation's language,
facts parsed from its JSON; an answer that is no JSON list, an HTTP error or a timeout stores the turn raw and
lists it for a later extraction pass."""

from __future__ import annotations

import json
import threading

import pytest

from indexer.capture import later, llm_extract, policy
from indexer.daemon import mem0_api
from indexer.errors import ProviderError
from model_servers import ChatServer
from polling import eventually

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


TURN = [{"role": "user", "content": "I moved to Ghent and my cat is called Biscuit."},
        {"role": "assistant", "content": "Lovely!"}]
FACTS = json.dumps([{"fact": "The user lives in Ghent", "type": "fact", "importance": 3, "speaker": "user"},
                    {"fact": "The user's cat is called Biscuit", "type": "entity", "speaker": "user"}])


def failed_turn(srv, make_memory):
    """A turn stored raw while the LLM was down, and the memory to run the later pass with."""
    srv.fail_next.append((500, {}, {"error": {"message": "model crashed"}}))
    mem = make_memory(**llm(srv))
    out = mem0_api.add(mem, {"messages": TURN, "user_id": "ada", "infer": True})
    return mem, [r["id"] for r in out["results"]]


def test_the_later_pass_extracts_a_failed_turn_and_moves_its_raw_lines_to_the_trash(make_memory):
    with ChatServer(FACTS) as srv:
        mem, raw_ids = failed_turn(srv, make_memory)
        assert [p["ids"] for p in policy.pending(mem.cfg.home)] == [raw_ids]
        out = later.extract_pending(mem)
    assert out["extracted"] == 1 and out["pending"] == 0 and policy.pending(mem.cfg.home) == []
    assert "I moved to Ghent" in srv.prompt() and "Lovely!" in srv.prompt()  # asked again with the raw turn
    notes = journal(mem, "ada")
    assert "**user:** The user lives in Ghent" in notes and "**user:** The user's cat is called Biscuit" in notes
    assert "I moved to Ghent and my cat" not in notes and "Lovely!" not in notes
    trashed = mem.trash(space="ada")
    texts = json.dumps(trashed, ensure_ascii=False)
    assert "I moved to Ghent and my cat" in texts and "Lovely!" in texts
    entry = next(e for e in trashed["entries"] if "Ghent and my cat" in e["text"])
    mem.restore(entry["id"], space="ada")
    assert "**user:** I moved to Ghent and my cat is called Biscuit." in journal(mem, "ada")


def test_a_raw_line_edited_or_forgotten_meanwhile_is_skipped_never_brought_back(make_memory):
    with ChatServer(FACTS) as srv:
        mem, raw_ids = failed_turn(srv, make_memory)
        mem.update(raw_ids[0], "I moved to Antwerp, in fact.", space="ada")
        mem.forget(raw_ids[1], space="ada")
        asked = len(srv.requests)
        out = later.extract_pending(mem)
    assert out["skipped"] == 1 and policy.pending(mem.cfg.home) == [] and len(srv.requests) == asked
    notes = journal(mem, "ada")
    assert "Antwerp" in notes and "Ghent" not in notes and "Lovely!" not in notes


def test_a_persistent_failure_is_retried_then_given_up_and_the_raw_turn_stays(make_memory):
    with ChatServer("I cannot help with that.") as srv:
        mem, raw_ids = failed_turn(srv, make_memory)
        for tries in range(1, later.GIVE_UP_AFTER):
            out = later.extract_pending(mem)
            assert out["failed"] == 1 and [p["tries"] for p in policy.pending(mem.cfg.home)] == [tries]
        out = later.extract_pending(mem)
    assert out["given_up"] == 1 and policy.pending(mem.cfg.home) == []
    notes = journal(mem, "ada")
    assert "**user:** I moved to Ghent and my cat is called Biscuit." in notes and "**assistant:** Lovely!" in notes


def test_without_an_llm_the_pass_does_nothing_and_keeps_the_list(make_memory):
    with ChatServer(FACTS) as srv:
        mem, raw_ids = failed_turn(srv, make_memory)
    plain = make_memory()  # the same home, no [llm]
    assert later.extract_pending(plain)["extracted"] == 0
    assert [p["ids"] for p in policy.pending(mem.cfg.home)] == [raw_ids]


def test_the_daemons_scheduled_pass_runs_beside_its_writer_and_writes_through_it(tmp_path):
    """The scheduler's `capture` starts the pass beside the writers: its adds and forgets are the writer's jobs."""
    from indexer import config
    from indexer.daemon.jobs import Job
    from indexer.daemon.service import Daemon
    from indexer.daemon.store_writer import StoreWriter
    from indexer.embedder import load_embedder

    home = tmp_path / "home"
    home.mkdir()
    with ChatServer(FACTS) as srv:
        cfg = config.load(home=home, env={}, embedder="none", **llm(srv))
        emb = load_embedder(cfg)
        stopping = threading.Event()
        writer = StoreWriter("global", home, emb, cfg, stopping)
        writer.start()
        try:
            writer.ready.wait()
            writer.call(Job.RECONCILE)
            daemon = Daemon(cfg, embedder=emb)
            daemon.writers = {"global": writer}
            srv.fail_next.append((500, {}, {"error": {"message": "model crashed"}}))
            mem0_api.add(daemon.reader(), {"messages": TURN, "user_id": "ada", "infer": True})
            assert len(policy.pending(home)) == 1
            daemon.enqueue_all("capture")
            assert eventually(lambda: policy.pending(home) == [] and len(srv.requests) == 2)
            reader = daemon.reader()
            assert eventually(lambda: bool(reader.search("Biscuit", space="ada", scope="global", mode="fts")))
        finally:
            stopping.set()
            writer.join(10)
    notes = "\n".join(p.read_text(encoding="utf-8") for p in (home / "spaces" / "ada").rglob("*.md"))
    assert "The user's cat is called Biscuit" in notes and "Lovely!" not in notes


def test_a_turn_marked_while_the_pass_runs_stays_listed(make_memory, monkeypatch):
    asked = llm_extract.extract

    def meanwhile(cfg, turns):  # another failed turn lands while the pass waits on the LLM
        policy.mark_pending(cfg.home, "bo", ["0123456789abcdef"], "timed out")
        return asked(cfg, turns)

    with ChatServer(FACTS) as srv:
        mem, _raw = failed_turn(srv, make_memory)
        monkeypatch.setattr(later.llm_extract, "extract", meanwhile)
        assert later.extract_pending(mem)["extracted"] == 1
    assert [(p["space"], p["ids"]) for p in policy.pending(mem.cfg.home)] == [("bo", ["0123456789abcdef"])]


def test_a_fact_the_add_refuses_keeps_the_turn_listed_and_raw(make_memory):
    secret = json.dumps([{"fact": "The user's AWS key is AKIAIOSFODNN7EXAMPLQ", "speaker": "user"}])
    with ChatServer(secret) as srv:
        mem, raw_ids = failed_turn(srv, make_memory)
        out = later.extract_pending(mem)
    assert out["failed"] == 1 and [(p["ids"], p["tries"]) for p in policy.pending(mem.cfg.home)] == [(raw_ids, 1)]
    notes = journal(mem, "ada")
    assert "I moved to Ghent and my cat" in notes and "Lovely!" in notes and "AKIA" not in notes
