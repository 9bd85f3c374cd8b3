"""`mdmem mcp` driven by the official MCP client over stdio: every tool, one refusal each, live resources."""

import asyncio
import json
import os
import subprocess

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from cli_process import command
from mcp_calls import stdio_params
from conftest import write_notes

TOOLS = {"memory_search", "memory_recall", "memory_add", "memory_get", "memory_update", "memory_forget",
         "memory_recent", "memory_status", "memory_history", "memory_restore", "memory_review"}


def _data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def _refusal(result) -> str:
    assert result.is_error
    text = result.content[0].text
    # one plain sentence: no pydantic dump, no docs link, no command-line flags, no traceback
    assert "\n" not in text and "pydantic" not in text and "http" not in text and "--" not in text, text
    assert "Traceback" not in text and "Error executing tool" not in text, text
    return text


def test_every_tool_over_stdio_with_one_refusal_each(tmp_path):
    home = tmp_path / "home"
    write_notes(home, {"user/preference.md": "# Preferences\n\n- 2025-01-05: I prefer my coffee black, without sugar or milk.\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(command("--home", str(home), "index"), env=env, check=True, timeout=300)
    params = stdio_params(["--home", str(home)], env=env)
    errlog = open(tmp_path / "stderr.txt", "w+")

    async def session():
        out = {}
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                out["info"], out["instructions"] = init.server_info, init.instructions
                out["tools"] = {t.name: t for t in (await s.list_tools()).tools}
                call = s.call_tool
                out["add"] = await call("memory_add", {"text": "I usually work from the Hangzhou office.", "type": "fact"})
                out["add_space"] = await call("memory_add", {"text": "Seraphina guards the forest glade at night.",
                                                              "type": "fact", "space": "Seraphina"})
                out["add_bad"] = await call("memory_add", {"text": "key " + "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"})
                out["add_type"] = await call("memory_add", {"text": "x", "type": "rumour"})
                out["search"] = await call("memory_search", {"query": "how do I like coffee", "limit": 3})
                out["search_compact"] = await call("memory_search", {"query": "coffee", "compact": True})
                out["search_space"] = await call("memory_search", {"query": "forest glade", "space": "Seraphina"})
                out["search_missing"] = await call("memory_search", {"limit": 3})
                out["search_spaces"] = await call("memory_search", {"query": "coffee forest glade",
                                                                     "spaces": ["Seraphina", ""]})
                out["search_spaces_bad"] = await call("memory_search", {"query": "x", "spaces": "Seraphina"})
                out["recall_spaces"] = await call("memory_recall", {"query": "how do I like coffee",
                                                                     "spaces": ["Seraphina", ""], "max_tokens": 400})
                out["recall_one_space"] = await call("memory_recall", {"query": "how do I like coffee",
                                                                        "spaces": ["Seraphina"]})
                out["recall_tokens_bad"] = await call("memory_recall", {"query": "x", "max_tokens": 5})
                out["recall"] = await call("memory_recall", {"query": "where do I work?"})
                out["recall_bad"] = await call("memory_recall", {"query": "x", "max_chars": "lots"})
                out["recall_long"] = await call("memory_recall", {"query": "so " * 1000 + "where do I work?"})
                coffee = _data(out["search"])["results"][0]["id"]
                out["get"] = await call("memory_get", {"ref": coffee})
                out["get_lines"] = await call("memory_get", {"ref": "user/preference.md:3"})
                out["get_bad"] = await call("memory_get", {"ref": "0123456789abcdef"})
                added = _data(out["add"])
                office = _data(await call("memory_get", {"ref": f"{added['uri']}:{added['start_line']}"}))["records"][0]
                out["update_stale"] = await call("memory_update", {"id": office["id"], "text": "I work from home.",
                                                                   "expected_hash": "0" * 64})
                out["update"] = await call("memory_update", {"id": office["id"], "text": "I work from the Shanghai office."})
                out["after_update"] = await call("memory_get", {"ref": _data(out["update"])["id"]})
                out["recent"] = await call("memory_recent", {"limit": 5, "compact": True})
                out["recent_bad"] = await call("memory_recent", {"scope": "everywhere"})
                out["forget_list"] = await call("memory_forget", {"query": "Shanghai office"})
                out["forget_bad"] = await call("memory_forget", {})
                out["forget"] = await call("memory_forget", {"id": _data(out["update"])["id"]})
                out["status"] = await call("memory_status", {})
                out["status_bad"] = await call("memory_status", {"scope": 3})
                out["unknown"] = await call("memory_nothing", {})
                # resources are live: a note written after start-up is listed and read as it is now
                write_notes(home, {"agent/later.md": "# Later\n\nWritten while the server runs.\n"})
                out["resources"] = [str(r.uri) for r in (await s.list_resources()).resources]
                out["read"] = (await s.read_resource("mdmem://global/agent/later.md")).contents[0].text
        return out

    out = asyncio.run(asyncio.wait_for(session(), 240))
    assert out["info"].name == "mdmem" and out["info"].version and out["info"].version[0].isdigit()
    assert "memory_recall" in out["instructions"] and "memory_forget" in out["instructions"]
    tools = out["tools"]
    assert set(tools) == TOOLS
    assert tools["memory_search"].annotations.read_only_hint and not tools["memory_update"].annotations.read_only_hint
    assert tools["memory_forget"].annotations.destructive_hint and not tools["memory_add"].annotations.destructive_hint
    schema = tools["memory_search"].input_schema["properties"]
    assert json.dumps(schema["scope"]).count("global") and "vector" in json.dumps(schema["mode"])
    assert "episodic" in json.dumps(tools["memory_add"].input_schema["properties"]["type"])
    assert "spaces" in schema and "max_tokens" in tools["memory_recall"].input_schema["properties"]

    assert _data(out["add"])["action"] == "appended"
    assert _data(out["add"])["id"] == _data(out["update"])["previous_id"]  # the add's own id, as get finds it
    assert _data(out["add_space"])["uri"].startswith("spaces/Seraphina/")
    assert "GitHub token" in _refusal(out["add_bad"]) and "ghp_" not in out["add_bad"].content[0].text
    assert "type must be one of" in _refusal(out["add_type"])
    hits = _data(out["search"])["results"]
    assert hits[0]["uri"] == "user/preference.md" and "coffee black" in hits[0]["content"]
    assert all("glade" not in h["content"] for h in hits)  # the space's memory stays in its space
    small = _data(out["search_compact"])["results"][0]
    assert set(small) >= {"id", "uri", "lines", "text"} and "content" not in small and "#" not in small["text"]
    assert ["spaces/Seraphina/journal" in h["uri"] or "spaces/Seraphina/" in h["uri"]
            for h in _data(out["search_space"])["results"]] == [True]
    assert _refusal(out["search_missing"]) == "Bad arguments for memory_search: query is required."
    assert {h["uri"].split("/")[0] for h in _data(out["search_spaces"])["results"]} == {"spaces", "user"}
    assert "spaces" in _refusal(out["search_spaces_bad"])
    assert "coffee black" in out["recall_spaces"].content[0].text  # "": the notes outside every space join
    assert "coffee black" not in out["recall_one_space"].content[0].text
    assert "max_tokens" in _refusal(out["recall_tokens_bad"])
    assert "Hangzhou" in out["recall"].content[0].text
    assert "max_chars must be a whole number" in _refusal(out["recall_bad"])
    said, block = out["recall_long"].content[0].text.split("\n", 1)  # the cut is said, its end still answered
    assert "3,016 characters; only its last 2,000 were read" in said and "Hangzhou" in block
    got = _data(out["get"])
    assert got["date"] == "2025-01-05" and got["access_count"] >= 1 and "coffee black" in got["text"]
    assert _data(out["get_lines"])["text"] == "- 2025-01-05: I prefer my coffee black, without sugar or milk."
    assert "No memory with id" in _refusal(out["get_bad"])
    assert "changed since it was read" in _refusal(out["update_stale"])
    assert _data(out["update"])["action"] == "updated"
    assert "Shanghai office" in _data(out["after_update"])["text"] and "Hangzhou" not in _data(out["after_update"])["text"]
    assert any("Shanghai" in r["text"] for r in _data(out["recent"])["results"])
    assert "scope must be one of" in _refusal(out["recent_bad"])
    listed = _data(out["forget_list"])
    assert listed["action"] == "would_forget" and any("Shanghai" in m["text"] for m in listed["memories"])
    assert _refusal(out["forget_bad"]) == "Give either id or query."
    assert _data(out["forget"])["action"] == "forgotten"
    assert "Shanghai" not in "".join(p.read_text() for p in home.rglob("*.md"))
    assert "global" in _data(out["status"])
    assert "scope must be" in _refusal(out["status_bad"])
    assert "No tool memory_nothing" in _refusal(out["unknown"])
    assert "mdmem://global/agent/later.md" in out["resources"] and "mdmem://global/user/preference.md" in out["resources"]
    assert "Written while the server runs." in out["read"]
    errlog.seek(0)
    assert errlog.read().strip() == ""  # refusals are answers, not log noise


def test_tools_answer_through_a_running_daemon(tmp_path):
    """With `mdmem serve` running, `mdmem mcp` is its client: the warm model and the store's one writer."""
    from daemon_harness import Served
    d = Served(tmp_path)
    write_notes(d.home, {"user/preference.md": "# Preferences\n\n- 2025-01-05: I prefer my coffee black.\n"})
    d.start()
    params = stdio_params(d.args, env=d.env)

    async def session():
        async with stdio_client(params, errlog=open(tmp_path / "stderr.txt", "w")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                hit = _data(await s.call_tool("memory_search", {"query": "coffee", "compact": True}))["results"][0]
                done = _data(await s.call_tool("memory_update", {"id": hit["id"], "text": "I take my coffee with milk."}))
                got = _data(await s.call_tool("memory_get", {"ref": done["id"]}))
                status = _data(await s.call_tool("memory_status", {}))
                return got, status

    try:
        got, status = asyncio.run(asyncio.wait_for(session(), 240))
    finally:
        assert d.stop() == 0, d.log.read_text()
    assert got["text"].endswith("- 2025-01-05: I take my coffee with milk.") and got["access_count"] >= 1
    assert status["global"]["daemon"] is True


def test_mcp_filters_by_date_and_lists_recent_memories(tmp_path):
    home = tmp_path / "home"
    write_notes(home, {"user/fact.md": "---\ntype: fact\n---\n\n- 2020-05-01: the old bicycle was blue\n"
                                       "- 2026-02-01: the new bicycle is green\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(command("--home", str(home), "index"), env=env, check=True, timeout=300)
    params = stdio_params(["--home", str(home)], env=env)

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                since = await s.call_tool("memory_search", {"query": "bicycle", "since": "2025-01-01"})
                until = await s.call_tool("memory_recall", {"query": "bicycle colour", "until": "2020-12-31"})
                recent = await s.call_tool("memory_recent", {"limit": 1})
                bad = await s.call_tool("memory_search", {"query": "bicycle", "since": "soon"})
                return since, until, recent, bad

    since, until, recent, bad = asyncio.run(asyncio.wait_for(session(), 240))
    assert [h["date"] for h in _data(since)["results"]] == ["2026-02-01"]
    assert "blue" in until.content[0].text and "green" not in until.content[0].text
    assert "[2020-05-01]" in until.content[0].text
    assert _data(recent)["results"][0]["text"].endswith("green")
    assert "2026-03-01" in _refusal(bad)
