"""`mdmem mcp` started as MCP clients start it (the SDK's short environment): it serves the store the client's
config names, refuses when none is named and none exists, and an empty answer names the store it searched."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

from mcp import ClientSession
from mcp.client.stdio import get_default_environment, stdio_client

from cli_process import command
from mcp_calls import stdio_params


def _client_env(home_dir, **extra) -> dict:
    """What the SDK passes a server whose config names no env (HOME, PATH, ...), with this checkout importable."""
    env = {**get_default_environment(), "HOME": str(home_dir), "HF_HUB_OFFLINE": "1"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return {**env, **extra}


def test_without_a_named_store_and_no_home_store_mcp_refuses_in_one_line(tmp_path, monkeypatch):
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "exported"))  # exported in the shell: the client drops it
    env = _client_env(user)
    assert "MDMEM_HOME" not in env
    done = subprocess.run(command("mcp"), env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    assert '"--home"' in line and '"MDMEM_HOME"' in line, line  # both ways to name it in a client's config
    assert not (user / ".mdmem").exists()  # no store made up on the spot
    assert not (tmp_path / "exported").exists()


def _session(params, calls: list[tuple[str, dict]], errlog) -> list[dict]:
    async def run():
        out = []
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                for name, args in calls:
                    result = await s.call_tool(name, args)
                    assert not result.is_error, result.content[0].text
                    out.append(json.loads(result.content[0].text))
        return out
    return asyncio.run(asyncio.wait_for(run(), timeout=300))


def test_a_store_named_in_args_or_env_is_served_and_an_empty_answer_names_it(tmp_path):
    user, store = tmp_path / "user", tmp_path / "memories"
    user.mkdir()
    subprocess.run(command("--home", str(store), "init"), env=_client_env(user), check=True,
                   capture_output=True, timeout=120)
    errlog = open(tmp_path / "stderr.txt", "w+")
    by_args = stdio_params(["--home", str(store)],
                                    env=_client_env(user))
    search, recent = _session(by_args, [("memory_search", {"query": "咖啡"}), ("memory_recent", {})], errlog)
    assert search["count"] == 0 and search["searched"] == {"global": str(store.resolve())}
    assert recent["count"] == 0 and recent["searched"] == {"global": str(store.resolve())}
    by_env = stdio_params([],
                                   env=_client_env(user, MDMEM_HOME=str(store)))
    added, found = _session(by_env, [("memory_add", {"text": "我喜欢喝黑咖啡。", "type": "preference"}),
                                     ("memory_search", {"query": "咖啡"})], errlog)
    assert added["store"] == "global" and (store / added["uri"]).is_file()
    assert found["count"] == 1 and "searched" not in found
    assert not (user / ".mdmem").exists()
