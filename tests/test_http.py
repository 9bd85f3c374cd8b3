"""`serve --http` over real HTTP on 127.0.0.1: a mem0 client's flow, MCP's streamable HTTP client, and refusals."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from cli_process import command

TOOL_ARGS = {  # every tool the server lists is called once, in this order; a new tool needs a line here
    "memory_add": {"text": "The user drinks oolong tea in the morning", "type": "preference"},
    "memory_search": {"query": "oolong tea", "limit": 3},
    "memory_recall": {"query": "what does the user drink"},
    "memory_status": {},
    "memory_recent": {"limit": 3},
    "memory_get": {"ref": "user/preference.md"},
    "memory_update": {"text": "The user drinks green tea in the morning"},  # + the id memory_search found
    "memory_forget": {"query": "green tea"},  # without confirm: only lists what it would remove
    "memory_history": {},  # + the id memory_search found
    "memory_restore": {},  # without an id: lists the trash (the correction's old text is in it)
    "memory_review": {},  # the review queue
}
TOOL_ERRORS = {
    "memory_search": {"query": "tea", "limit": -1},
    "memory_add": {"text": ""},
    "memory_get": {"ref": "0000000000000000"},
    "memory_update": {"id": "0000000000000000", "text": "x"},
    "memory_forget": {"id": "0000000000000000"},
    "memory_recent": {"limit": 0},
}


def test_mem0_client_flow_add_on_save_search_before_reply_update_delete(server):
    turn = {"messages": [{"role": "user", "content": "I'm allergic to peanuts, remember that."}], "user_id": "alice"}
    status, added = server.call("POST", "/memories", turn)
    assert status == 200 and added["results"][0]["event"] == "ADD"
    assert added["results"][0]["memory"] == "I'm allergic to peanuts, remember that."
    status, _ = server.call("POST", "/memories", {"messages": [{"role": "user", "content": "I love peanut butter"}],
                                                 "user_id": "bob"})
    assert status == 200
    # the front end searches before its reply: only alice's memories come back for alice
    status, found = server.call("POST", "/search", {"query": "peanut allergy", "filters": {"user_id": "alice"}})
    assert status == 200 and found["results"]
    hit = found["results"][0]
    assert "allergic to peanuts" in hit["memory"] and hit["user_id"] == "alice"
    assert {"id", "memory", "score", "metadata", "created_at"} <= set(hit)
    assert all("peanut butter" not in r["memory"] for r in found["results"])
    status, one = server.call("GET", f"/memories/{hit['id']}")
    assert status == 200 and "allergic to peanuts" in one["memory"]
    status, listed = server.call("GET", "/memories?user_id=alice")
    assert status == 200 and [r["id"] for r in listed["results"]] == [hit["id"]]
    # a correction, then a deletion, both through the same note on disk
    status, upd = server.call("PUT", f"/memories/{hit['id']}", {"text": "Allergic to peanuts and cashews"})
    assert status == 200 and upd["message"] == "Memory updated successfully!" and upd["id"] == hit["id"]
    note = server.home / hit["uri"]
    assert "Allergic to peanuts and cashews" in note.read_text(encoding="utf-8")
    status, found = server.call("POST", "/search", {"query": "cashews", "user_id": "alice"})
    assert found["results"][0]["id"] == upd["current_id"] != hit["id"]  # the record's id follows its text
    status, one = server.call("GET", f"/memories/{hit['id']}")  # the id the front end holds still works
    assert status == 200 and "cashews" in one["memory"]
    status, again = server.call("PUT", f"/memories/{hit['id']}", {"text": "Allergic to peanuts, cashews and kiwi"})
    assert status == 200 and "kiwi" in server.call("GET", f"/memories/{hit['id']}")[1]["memory"]
    status, gone = server.call("DELETE", f"/memories/{hit['id']}")
    assert status == 200 and gone == {"message": "Memory deleted successfully"}
    assert "cashews" not in note.read_text(encoding="utf-8")
    for old in (hit["id"], upd["current_id"], again["current_id"]):
        assert server.call("GET", f"/memories/{old}")[0] == 404
    status, found = server.call("POST", "/search", {"query": "peanut", "user_id": "bob"})
    assert "peanut butter" in found["results"][0]["memory"]  # bob's memory untouched


def test_the_self_hosted_history_delete_all_and_reset_paths(server):
    add = {"messages": [{"role": "user", "content": "I keep bees on the roof"}], "user_id": "erin",
           "metadata": {"chat": "roof.jsonl"}}
    status, added = server.call("POST", "/memories", add)
    mid = added["results"][0]["id"]
    server.call("PUT", f"/memories/{mid}", {"text": "I keep bees in the garden"})
    status, events = server.call("GET", f"/memories/{mid}/history")
    assert status == 200 and [(e["event"], e["new_memory"]) for e in events] == [
        ("ADD", "I keep bees on the roof"), ("UPDATE", "I keep bees in the garden")]
    assert server.call("GET", f"/memories/{mid}")[1]["metadata"] == {"chat": "roof.jsonl"}
    assert server.call("DELETE", "/memories")[0] == 400  # whose? never every space at once
    status, gone = server.call("DELETE", "/memories?user_id=erin")
    assert status == 200 and "1 memories" in gone["message"]
    assert server.call("GET", "/memories?user_id=erin")[1]["results"] == []
    server.call("POST", "/memories", {**add, "user_id": "frank"})
    status, _ = server.call("POST", "/reset")
    assert status == 200 and server.call("GET", "/memories?user_id=frank")[1]["results"] == []
    status, body = server.call("POST", "/v1/exports/", {"schema": "{}"})
    assert status == 404 and "not served" in body["detail"]


def test_an_import_while_the_daemon_serves_is_indexed_by_it_and_searchable_over_http(server):
    export = Path(__file__).parent / "fixtures" / "imports" / "mem0" / "get_all.json"
    out = subprocess.run(command("--home", str(server.home), "import", str(export),
                          "--space", "family", "--json"), env=server.env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["added"] == 4 and json.loads(out.stdout)["indexed"]
    status, found = server.call("POST", "/search", {"query": "vegetarian peanuts", "user_id": "family"})
    assert status == 200 and "vegetarian" in found["results"][0]["memory"]


def test_without_the_token_nothing_is_answered(server):
    assert server.call("GET", "/memories", token=None)[0] == 401
    assert server.call("POST", "/search", {"query": "x"}, token="not-the-token-at-all")[0] == 401
    assert server.call("GET", "/mcp", token=None)[0] == 401
    status, _ = server.call("GET", "/memories?user_id=alice", token=None, headers={"X-API-Key": server.token})
    assert status == 200  # mem0's API-key header works too
    mode = stat.S_IMODE((server.home / ".http-token").stat().st_mode)
    assert mode == 0o600


def test_a_rebinding_host_or_a_foreign_origin_is_refused(server):
    status, body = server.call("GET", "/memories", headers={"Host": f"attacker.example:{server.port}"})
    assert status == 421 and "not this server" in body["detail"]
    status, _ = server.call("GET", "/memories", headers={"Origin": "http://attacker.example"})
    assert status == 403
    assert server.call("GET", "/memories", headers={"Host": f"localhost:{server.port}",
                                                    "Origin": f"http://localhost:{server.port}"})[0] == 200


def test_a_10_mb_body_is_refused_and_the_server_keeps_answering(server):
    big = json.dumps({"messages": [{"role": "user", "content": "x" * (10 * 1024 * 1024)}], "user_id": "a"}).encode()
    status, body = server.call("POST", "/memories", big)
    assert status == 413 and "bytes" in body["detail"]
    assert server.call("GET", "/memories")[0] == 200


@pytest.mark.parametrize("method, path, body, status, words", [
    ("POST", "/search", b'{"query": ', 400, "not valid JSON"),
    ("POST", "/search", {"query": ""}, 400, "query must be"),
    ("POST", "/v3/memories/search/", {"query": 5, "filters": {"user_id": "a"}}, 400,
     'query must be a non-empty string (got 5); e.g. {"query": "food", "filters": {"user_id": "alice"}}'),
    ("POST", "/search", {"query": "x", "threshold": "high"}, 400,
     'threshold must be a finite number (got \'high\'); e.g. {"threshold": 0.2}'),
    ("POST", "/search", b'{"query": "x", "threshold": NaN}', 400, "threshold must be a finite number (got nan)"),
    ("POST", "/search", {"query": "x", "top_k": "many"}, 400, "top_k"),
    # validation's rules: the value given and how to fix it, in mem0's {"detail"} with a 400
    ("POST", "/v2/memories/search/", {"query": "x", "top_k": 0}, 400,
     'top_k must be a whole number from 1 to 1000 (got 0); e.g. {"top_k": 10}'),
    ("GET", "/v1/memories/?user_id=a&page_size=5000", None, 400,
     "page_size must be a whole number from 1 to 1000 (got '5000')"),
    ("POST", "/v1/memories/search/", [1, 2], 400, 'the body must be a JSON object (got [1, 2]); e.g. {"query": '),
    ("POST", "/memories", {"messages": [{"role": "user", "content": "hi"}]}, 400, "At least one identifier"),
    ("POST", "/memories", {"messages": "x", "user_id": "../../etc"}, 400, "not a usable name"),
    ("GET", "/memories/0123456789abcdef", None, 404, "no memory with id"),
    ("DELETE", "/memories/not-an-id", None, 400, "not a memory id"),
    ("PUT", "/memories/0123456789abcdef", {"text": "x"}, 404, "no memory with id"),
])
def test_bad_requests_get_a_status_and_a_reason(server, method, path, body, status, words):
    got, answer = server.call(method, path, body)
    assert got == status and words in answer["detail"]


def test_mcp_over_streamable_http_lists_and_calls_every_tool(server):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def session_run():
        results = {}
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"}) as client:
            async with streamable_http_client(f"http://127.0.0.1:{server.port}/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    names = [t.name for t in (await s.list_tools()).tools]
                    for name in [n for n in TOOL_ARGS if n in names]:
                        args = dict(TOOL_ARGS[name])
                        if name in ("memory_update", "memory_history"):
                            args["id"] = json.loads(results["memory_search"].content[0].text)["results"][0]["id"]
                        results[name] = await s.call_tool(name, args)
                    for name in names:
                        if name in TOOL_ERRORS:
                            results[name + "!"] = await s.call_tool(name, TOOL_ERRORS[name])
        return names, results

    from indexer import config
    from indexer.mcp.server import build_server

    names, results = asyncio.run(session_run())
    stdio = [t.name for t in asyncio.run(build_server(None, config.load(home=server.home, env={})).list_tools())]  # what `mdmem mcp` lists
    assert names == stdio and len(names) == 11
    assert set(names) <= set(TOOL_ARGS), "a new tool: give it arguments in TOOL_ARGS"
    for name in names:
        assert not results[name].is_error, (name, results[name].content)
        if name in TOOL_ERRORS:
            assert results[name + "!"].is_error and "Traceback" not in str(results[name + "!"].content), name
    assert "oolong" in json.dumps([c.model_dump() for c in results["memory_search"].content], ensure_ascii=False)
    # the add, then the correction, reached the note through the daemon; forget without confirm only lists
    assert "green tea" in (server.home / "user/preference.md").read_text(encoding="utf-8")
    assert "green tea" in results["memory_forget"].content[0].text


def test_only_loopback_addresses_are_served(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(tmp_path)}
    (tmp_path / "h").mkdir()
    out = subprocess.run(command("--home", str(tmp_path / "h"), "serve", "--http",
                          "0.0.0.0:8765"), env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "loopback only" in out.stderr and out.stderr.count("\n") == 1
    assert not list((tmp_path / "h").iterdir())  # refused before anything was created
