"""One set of argument rules on every surface: Python, command line, daemon socket and MCP say the same."""

import asyncio
import os
import subprocess

import pytest

from cli_process import command
from conftest import write_notes
from indexer import config
from indexer.errors import ArgumentError
from indexer.memory import Memory
from indexer.validation import MIN_RECALL_CHARS

NOTES = {"user/preference.md": "# Preferences\n\n- 2025-01-05: I prefer my coffee black, without sugar or milk.\n"}
# (method, arguments, what every surface must say)
CASES = [
    ("search", {"query": "coffee", "limit": 0}, "limit must be a whole number of 1 or more"),
    ("recall", {"query": "coffee", "limit": -3}, "limit must be a whole number of 1 or more"),
    ("recall", {"query": "coffee", "max_chars": 10}, f"max_chars must be a whole number of {MIN_RECALL_CHARS} or more"),
    ("add", {"text": "I like tea", "importance": 9}, "importance must be a whole number from 1 to 5"),
    ("search", {"query": "coffee", "mode": "psychic"}, "mode must be one of hybrid, fts, vector"),
]
CLI_ARGS = {"limit": "--limit", "max_chars": "--max-chars", "importance": "--importance", "mode": "--mode"}


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    write_notes(home, NOTES)
    return home


@pytest.mark.unit
def test_python_raises_the_rule_without_naming_flags(home, none_embedder):
    with Memory(cfg=config.load(home=home, env={}), embedder=none_embedder) as mem:
        mem.index()
        for method, args, message in CASES:
            with pytest.raises(ArgumentError) as err:
                getattr(mem, method)(**args)
            assert message in str(err.value) and "--" not in str(err.value)
        # a budget that passes the first check but cannot hold the memory found says the size it needs
        with pytest.raises(ArgumentError, match=r"below the smallest memory found \((\d+) characters\)") as err:
            mem.recall("coffee", max_chars=MIN_RECALL_CHARS)
        need = int(err.value.rule.split("(")[1].split()[0])
        out = mem.recall("coffee", max_chars=need)
        assert out["memories"] and len(out["text"]) <= need


def test_command_line_names_its_flags_and_exits_2(home):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(home), "--embedder", "none")
    for method, args, message in CASES:
        argv = [method, args.get("query") or args["text"]]
        for name, value in args.items():
            if name in CLI_ARGS:
                argv += [CLI_ARGS[name], str(value)]
        r = subprocess.run(base + argv, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        name = next(n for n in CLI_ARGS if n in args and message.startswith(n))
        if name == "mode":  # click refuses a choice itself, before mdmem sees it
            assert "psychic" in r.stderr
            continue
        assert message.replace(name, CLI_ARGS[name], 1) in r.stderr and r.stderr.count("\n") == 1
    assert not (home / "user" / "preference.md").read_text().count("tea")


def test_daemon_socket_answers_with_the_same_messages(tmp_path, home):
    from daemon_harness import Served
    served = Served(tmp_path / "d")
    write_notes(served.home, NOTES)
    served.args += ["--embedder", "none"]
    served.start()
    try:
        for method, args, message in CASES:
            with pytest.raises(ArgumentError) as err:
                served.call(method, **args)
            assert message in str(err.value) and "--" not in str(err.value)
        r = served.cli("recall", "coffee", "--max-chars", "10")  # through the daemon: the flag's name again
        assert r.returncode == 2 and "--max-chars must be" in r.stderr
    finally:
        assert served.stop() == 0


def test_mcp_tools_refuse_by_the_same_rules(home):
    """The tools' schemas take their bounds from the same rules; a refusal names the argument, never a flag."""
    from mcp import ClientSession
    from mcp_calls import stdio_params
    from mcp.client.stdio import stdio_client
    params = stdio_params(["--home", str(home), "--embedder", "none"], env={**os.environ, "HF_HUB_OFFLINE": "1"})
    tools = {"search": "memory_search", "recall": "memory_recall", "add": "memory_add"}
    cases = [(m, args, msg) for m, args, msg in CASES if "limit" not in args or m == "search"]

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                listed = {t.name: t.input_schema for t in (await s.list_tools()).tools}
                return listed, [await s.call_tool(tools[m], args) for m, args, _ in cases]

    listed, answers = asyncio.run(asyncio.wait_for(session(), 240))
    assert listed["memory_recall"]["properties"]["max_chars"]["minimum"] == MIN_RECALL_CHARS
    assert listed["memory_add"]["properties"]["importance"]["anyOf"][0]["maximum"] == 5
    for answer, (_m, args, message) in zip(answers, cases):
        text = answer.content[0].text
        name = message.split()[0]
        assert answer.is_error and name in text.lower() and "--" not in text, text


@pytest.mark.unit
def test_mem0s_threshold_is_a_finite_number_or_left_out():
    from indexer import validation
    assert validation.threshold(None) is None and validation.threshold(0) == 0.0 and validation.threshold(0.25) == 0.25
    for bad, shown in (("high", "'high'"), (True, "True"), (float("nan"), "nan"), (float("inf"), "inf"), ([0.2], "[0.2]")):
        with pytest.raises(ArgumentError) as err:
            validation.threshold(bad)
        # before: NaN and Infinity passed (a cut nothing passes, or all); the rest said no value and no body
        assert str(err.value) == f'threshold must be a finite number (got {shown}); e.g. {{"threshold": 0.2}}'


@pytest.mark.unit
def test_a_query_sent_in_a_body_is_a_string_with_words():
    from indexer import validation
    example = '{"query": "food", "filters": {"user_id": "alice"}}'
    assert validation.query_text("咖啡 coffee", example) == "咖啡 coffee"
    for bad, got in ((None, ""), ("", " (got '')"), ("  \n", " (got '  \\n')"), (42, " (got 42)"), (["a"], " (got ['a'])")):
        with pytest.raises(ArgumentError) as err:
            validation.query_text(bad, example)
        assert str(err.value) == f"query must be a non-empty string{got}; e.g. {example}"
