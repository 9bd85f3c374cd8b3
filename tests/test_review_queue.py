"""The review queue on every surface: `mdmem review` (a real process), /v1/review/ on a real daemon (its token,
writes as the writer's jobs), the memory_review tool through the official MCP client; and consolidation's
proposals, made by the store writer's scheduled job run synchronously, accepted into a summary note."""

from __future__ import annotations

import http.client
import json
import os

from cli_process import mdmem
from conftest import write_notes
from mcp_calls import call_tools

from indexer import config
from indexer.daemon.jobs import Job
from indexer.daemon.scheduler import JOBS
from indexer.memory import Memory
from indexer.notes import decision_log

NEAR = ("My brother lives in Oslo", "My cousin lives in Oslo")  # cosine 0.90, another person: kept and queued


def _mdmem(home, *args, check=True):
    return mdmem("--home", str(home), *args, check=check)


def test_the_command_line_lists_rejects_and_refuses_twice(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for text in NEAR:
        _mdmem(home, "add", text, "--type", "fact")
    listed = json.loads(_mdmem(home, "review", "--json").stdout)
    assert listed["count"] == 1 and listed["entries"][0]["action"] == "kept"
    assert "My brother lives in Oslo" in listed["entries"][0]["reason"]
    plain = _mdmem(home, "review").stdout
    assert listed["entries"][0]["id"] in plain and "kept" in plain
    done = json.loads(_mdmem(home, "review", "reject", listed["entries"][0]["id"], "--json").stdout)
    assert done["status"] == "rejected"
    assert "My cousin" not in (home / "user" / "fact.md").read_text(encoding="utf-8")
    again = _mdmem(home, "review", "reject", listed["entries"][0]["id"], check=False)
    assert again.returncode == 2 and "rejected already" in again.stderr and "Traceback" not in again.stderr
    assert json.loads(_mdmem(home, "review", "--json").stdout)["count"] == 0
    assert json.loads(_mdmem(home, "review", "--all", "--json").stdout)["count"] == 1


def test_http_routes_list_and_accept_with_the_token(server):
    for text in NEAR:
        status, _ = server.call("POST", "/memories", {"messages": [{"role": "user", "content": text}],
                                                      "user_id": "rita", "infer": False})
        assert status == 200
    status, _ = server.call("GET", "/v1/review?user_id=rita", token=None)
    assert status == 401
    status, listed = server.call("GET", "/v1/review?user_id=rita")
    assert status == 200 and listed["count"] == 1, listed
    entry = listed["entries"][0]
    assert entry["action"] == "kept" and entry["space"] == "rita"
    status, done = server.call("POST", f"/v1/review/{entry['id']}/accept", {"user_id": "rita"})
    assert status == 200 and done["status"] == "accepted"
    status, again = server.call("POST", f"/v1/review/{entry['id']}/reject", {"user_id": "rita"})
    assert status == 400 and "accepted already" in again["detail"]
    status, missing = server.call("POST", "/v1/review/000000000000/accept", {})
    assert status == 404
    status, proposed = server.call("POST", "/v1/review/consolidate", {})
    assert status == 200 and proposed["proposed"] == 0  # no journal older than 30 days here
    logged = decision_log.entries(server.home)  # written by the store's writer thread
    assert [e["status"] for e in logged if e["id"] == entry["id"]] == ["accepted"]


def test_the_browser_loads_its_review_tab(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        for path in ("/ui/", "/ui/review.js"):
            conn.request("GET", path, headers={"Host": f"127.0.0.1:{server.port}"})
            resp = conn.getresponse()
            body = resp.read().decode()
            assert resp.status == 200, path
            if path == "/ui/":
                assert '<script src="review.js">' in body
    finally:
        conn.close()
    assert resp.getheader("content-type").startswith("text/javascript") and "/v1/review/" in body
    assert "innerHTML" not in body and "insertAdjacentHTML" not in body


def test_the_mcp_tool_lists_and_edits(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with open(tmp_path / "stderr.txt", "w+") as errlog:
        first = call_tools(["--home", str(home)], env, [("memory_add", {"text": t}) for t in NEAR] +
                           [("memory_review", {})], errlog)
        listed = json.loads(first[-1].content[0].text)
        assert listed["count"] == 1
        decision = listed["entries"][0]["id"]
        second = call_tools(["--home", str(home)], env, [
            ("memory_review", {"action": "accept"}),  # no id: refused in one sentence
            ("memory_review", {"action": "edit", "id": decision, "text": "My cousin Ola lives in Oslo"}),
            ("memory_review", {"all": True})], errlog)
    assert second[0].is_error and "id" in second[0].content[0].text
    assert json.loads(second[1].content[0].text)["status"] == "edited"
    assert json.loads(second[2].content[0].text)["entries"][0]["status"] == "edited"
    assert "My cousin Ola lives in Oslo" in (home / "user" / "fact.md").read_text(encoding="utf-8")


def test_consolidation_proposes_old_journal_weeks_and_accepting_writes_a_linked_summary(writer_daemon):
    _daemon, writer, home = writer_daemon
    journal = {"journal/2026-01-05.md": "# Journal 2026-01-05\n\n- 09:30: We chose SQLite for the cache.\n"
                                        "- 14:00: Met Anna about the launch date.\n",
               "journal/2026-01-07.md": "# Journal 2026-01-07\n\n- 10:00: 决定下周三发布测试版。\n",
               "journal/2026-01-14.md": "# Journal 2026-01-14\n\n- 11:00: Booked the venue for the launch.\n"}
    write_notes(home, journal)
    writer.call(Job.RECONCILE)
    assert "consolidate" in JOBS  # the scheduler enqueues it; here it runs at once on the writer
    result = writer.call(Job.CONSOLIDATE)
    assert result["proposed"] == 2 and {p["week"] for p in result["proposals"]} == {"2026-W02", "2026-W03"}
    assert writer.call(Job.CONSOLIDATE)["proposed"] == 0  # a week is proposed once
    _daemon, writer, _home = None, None, None

    mem = Memory(cfg=config.load(home=home, env={}, embedder="none"))
    try:
        waiting = {e["week"]: e for e in mem.review()["entries"]}
        w02 = waiting["2026-W02"]
        assert w02["action"] == "proposed" and len(w02["sources"]) == 3 and "older than 30 days" in w02["reason"]
        assert "We chose SQLite for the cache." in w02["text"] and "决定下周三发布测试版。" in w02["text"]
        done = mem.review("accept", id=w02["id"])
        summary = (home / done["result"]["uri"]).read_text(encoding="utf-8")
        assert done["result"]["uri"] == "summaries/2026-W02.md"
        assert "(../journal/2026-01-05.md)" in summary and "(../journal/2026-01-07.md)" in summary
        assert mem.search("SQLite cache", mode="fts", bump=False)  # indexed at once
        mem.review("reject", id=waiting["2026-W03"]["id"])
        assert not (home / "summaries/2026-W03.md").exists()
        for uri, text in journal.items():  # the originals are never touched
            assert (home / uri).read_text(encoding="utf-8") == text
        assert mem.consolidate()["proposed"] == 0  # a rejected week is not asked again
    finally:
        mem.close()


def test_with_an_llm_the_proposal_is_its_summary(make_memory):
    from test_llm_rewrite import ChatServer, llm

    week = {"journal/2026-02-02.md": "# Journal 2026-02-02\n\n- 09:00: 我们决定用SQLite做缓存。\n",
            "journal/2026-02-10.md": "# Journal 2026-02-10\n\n- 09:00: Ordered the new laptops.\n"}
    with ChatServer("- 决定用SQLite做缓存") as srv:
        mem = make_memory(global_notes=week, **llm(srv))
        first = mem.consolidate(now="2026-11-27")
        assert first["proposed"] == 2
        by = {e["week"]: e for e in mem.review()["entries"]}
    assert by["2026-W06"]["by"] == "llm" and by["2026-W06"]["text"].startswith("# Week 2026-W06")
    assert "- 决定用SQLite做缓存\n\n## Sources" in by["2026-W06"]["text"]
    assert "我们决定用SQLite做缓存。" in srv.requests[0]["body"]["messages"][1]["content"]
    assert "entries' language" in srv.requests[0]["body"]["messages"][0]["content"]


def test_an_llm_that_answers_nothing_leaves_the_digest(make_memory):
    from test_llm_rewrite import ChatServer, llm

    week = {"journal/2026-02-02.md": "# Journal 2026-02-02\n\n- 09:00: Ordered the new laptops.\n"}
    with ChatServer("") as srv:
        mem = make_memory(global_notes=week, **llm(srv))
        made = mem.consolidate(now="2026-11-27")
    entry = mem.review()["entries"][0]
    assert made["proposed"] == 1 and entry["by"] == "rules" and "no model summarised them" in entry["text"]
