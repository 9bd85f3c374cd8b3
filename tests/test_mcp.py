"""`mdmem mcp` driven by a real MCP client session over stdio."""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import write_notes


def test_mcp_client_lists_tools_and_searches(tmp_path):
    home = tmp_path / "home"
    write_notes(home, {"user/preference.md": "# Preferences\n\n- 2025-01-05: I prefer my coffee black, without sugar or milk.\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), "index"], env=env, check=True, timeout=300)
    params = StdioServerParameters(command=sys.executable, args=["-m", "indexer", "--home", str(home), "mcp"],
                                   env={**os.environ, "HF_HUB_OFFLINE": "1"})

    async def session():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = {t.name for t in (await s.list_tools()).tools}
                added = await s.call_tool("memory_add", {"text": "I usually work from the Hangzhou office.", "type": "fact"})
                found = await s.call_tool("memory_search", {"query": "how do I like coffee", "limit": 3})
                recalled = await s.call_tool("memory_recall", {"query": "where do I work?"})
                refused = await s.call_tool("memory_add", {"text": "key " + "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"})
                status = await s.call_tool("memory_status", {})
                resources = [str(r.uri) for r in (await s.list_resources()).resources]
                return tools, added, found, recalled, refused, status, resources

    tools, added, found, recalled, refused, status, resources = asyncio.run(asyncio.wait_for(session(), 240))
    assert tools >= {"memory_search", "memory_recall", "memory_add", "memory_status"}
    assert json.loads(added.content[0].text)["action"] == "appended"
    hits = [json.loads(c.text) for c in found.content]
    assert any(h["uri"] == "user/preference.md" and "coffee black" in h["content"] for h in hits)
    assert "Hangzhou" in recalled.content[0].text
    assert refused.is_error and "GitHub token" in refused.content[0].text and "ghp_" not in refused.content[0].text
    assert "global" in status.content[0].text
    assert "mdmem://global/user/preference.md" in resources


def test_mcp_filters_by_date_and_lists_recent_memories(tmp_path):
    home = tmp_path / "home"
    write_notes(home, {"user/fact.md": "---\ntype: fact\n---\n\n- 2020-05-01: the old bicycle was blue\n"
                                       "- 2026-02-01: the new bicycle is green\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), "index"], env=env, check=True, timeout=300)
    params = StdioServerParameters(command=sys.executable, args=["-m", "indexer", "--home", str(home), "mcp"], env=env)

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
    assert [json.loads(c.text)["date"] for c in since.content] == ["2026-02-01"]
    assert "blue" in until.content[0].text and "green" not in until.content[0].text
    assert "[2020-05-01]" in until.content[0].text
    assert json.loads(recent.content[0].text)["content"].endswith("green")
    assert bad.is_error and "7d" in bad.content[0].text
