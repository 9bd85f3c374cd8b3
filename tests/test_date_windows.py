"""Date windows keep every memory of their days: journals written by hand, searched and listed with --since/--until
and with time words, in the user's time zone."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from cli_process import mdmem
from conftest import write_notes
from indexer import config
from indexer.errors import ConfigError

# a day's first and last minute, the minutes either side of its midnights, a date-only item, an item with a
# date and a time, a note dated by its front matter (a document and a memory note)
NOTES = {
    "journal/2026-11-24.md": "- 23:59: 睡前把《三体》第一部读完了，熬到很晚。\n",
    "journal/2026-11-25.md": "# 2026-11-25\n\n"
                             "- 00:00: 零点刚过，许了个愿，希望家人都健康。\n"
                             "- 07:05: 早上在小区跑了五公里，出了一身汗。\n"
                             "- 19:30: 和小雨一起去西湖边放风筝，风很大。\n"
                             "- 21:00: 给妈妈打了电话，她说下周要来杭州。\n"
                             "- 23:59: 睡前写完了今天的日记。\n",
    "journal/2026-11-26.md": "- 00:00: 半夜被楼上的装修声吵醒了。\n- 00:01: Couldn't sleep, read the news.\n",
    "journal/2026-11-18.md": "- 10:00: 上午去医院复查，医生说恢复得不错。\n- 15:00: 下午和同事开会讨论新项目的排期。\n",
    "notes/life.md": "# 生活\n\n"
                     "- 2026-11-25: 买了一盆绿萝放在书桌上。\n"
                     "- 2026-11-25 08:15: Had breakfast at the café downstairs.\n"
                     "- 2026-11-17: 给车做了保养，换了机油。\n"
                     "- 2026-11-27 00:00: 刚过零点还在改方案。\n",
    "trips/hangzhou.md": "---\ndate: 2026-11-25\n---\n# 杭州一日游\n\n下午在灵隐寺烧香，晚上去河坊街吃了小吃，人很多但很热闹。\n",
    "journal/dinner.md": "---\ntype: episodic\ndate: 2026-11-18\n---\n- 和同事们一起吃了火锅，聊到很晚才回家。\n",
    # a moment with its offset is the day it was written on (the 26th in UTC and in Shanghai)
    "notes/late.md": "---\ndate: 2026-11-25T23:30:00-08:00\n---\n# Late call\n\nA late call with the Seattle team "
                     "about the launch checklist, which ran past midnight.\n",
}
DOCUMENTS = {"灵隐寺", "Seattle team"}  # sections dated by front matter: search keeps them, recent lists memories
DAY_25 = {"许了个愿", "跑了五公里", "放风筝", "给妈妈打了电话", "写完了今天的日记", "绿萝", "breakfast at the café"} | DOCUMENTS
DAY_18 = {"医院复查", "开会讨论新项目", "吃了火锅"}
DAY_17 = {"给车做了保养"}
DAY_26 = {"装修声", "read the news"}
NOW = "2026-11-27"  # a Friday: 前天 is the 25th, 昨天 the 26th, 上周 Monday 16 to Sunday 22


def _named(texts) -> set[str]:
    """Which of the days' memories the texts are (each by a phrase only it holds)."""
    phrases = DAY_25 | DAY_18 | DAY_17 | DAY_26 | {"三体", "改方案"}
    return {p for t in texts for p in phrases if p in t}


@pytest.mark.parametrize("mode", ["hybrid", "fts", "vector"])
def test_since_until_keeps_every_memory_of_the_day(make_memory, mode):
    mem = make_memory(NOTES)
    for question in ("我干了什么", "what did I do", "日记"):
        hits = mem.search(question, mode=mode, since="2026-11-25", until="2026-11-25", limit=20)
        assert _named(h.content for h in hits) == DAY_25, (question, mode)
        assert all(h.date[:10] == "2026-11-25" for h in hits)
    hits = mem.search("我干了什么", mode=mode, since="2026-11-18", until="2026-11-18", limit=20)
    assert _named(h.content for h in hits) == DAY_18
    hits = mem.search("我干了什么", mode=mode, since="2026-11-17", until="2026-11-25", limit=20)
    assert _named(h.content for h in hits) == DAY_17 | DAY_18 | DAY_25 | {"三体"}


def test_a_store_without_vectors_keeps_the_day_too(make_memory, none_embedder):
    mem = make_memory(NOTES, embedder=none_embedder)
    hits = mem.search("我干了什么", since="2026-11-25", until="2026-11-25", limit=20)
    assert _named(h.content for h in hits) == DAY_25
    # without dates a search keeps only what its words match
    assert "灵隐寺" not in _named(h.content for h in mem.search("我干了什么", limit=20))


@pytest.mark.parametrize("time_window", ["rank", "filter"])
@pytest.mark.parametrize("question,days", [
    ("我前天干了什么", DAY_25),
    ("我昨天干了什么", DAY_26),
    ("上周我做了什么", DAY_17 | DAY_18),
    ("What did I do last week?", DAY_17 | DAY_18),
    ("what happened yesterday", DAY_26),
    ("what did I do on 2026-11-18", DAY_18),
    ("what did I do the day before yesterday", DAY_25),
])
def test_time_words_keep_every_memory_of_their_days(make_memory, question, days, time_window):
    mem = make_memory(NOTES, time_window=time_window)
    hits = mem.search(question, now=NOW, limit=20, explain=True)
    inside = [h for h in hits if h.explain["in_window"]]
    assert _named(h.content for h in inside) == days, question
    # in the window means dated on one of its days, whichever way the memory was found
    first, *_, last = hits[0].explain["window"].split(" (")[0].split(" to ") * 2  # one day: both ends the same
    assert all(h.explain["in_window"] == bool(h.date and first <= h.date[:10] <= last) for h in hits)
    assert not _named(h.content for h in hits if not h.explain["in_window"]) & days
    if time_window == "filter":
        assert len(inside) == len(hits)
    else:  # every memory of the window is lifted above what it was without it
        assert all(h.explain["window_lift"] > 0 for h in inside)


@pytest.mark.parametrize("question,days", [("昨天", DAY_26), ("上周", DAY_17 | DAY_18), ("last week?", DAY_17 | DAY_18),
                                           ("the day before yesterday", DAY_25)])
def test_a_question_of_time_words_alone_lists_its_days(make_memory, question, days):
    hits = make_memory(NOTES).search(question, now=NOW, limit=20, explain=True)
    assert _named(h.content for h in hits) == days and all(h.explain["in_window"] for h in hits)


def test_recall_of_a_weak_question_gives_the_days_it_asks_for(make_memory):
    mem = make_memory(NOTES)
    block = mem.recall("我干了什么", since="2026-11-25", until="2026-11-25", limit=20)
    assert _named(m["text"] for m in block["memories"]) == DAY_25
    block = mem.recall("what did I do last week", now=NOW, limit=20)
    assert _named(m["text"] for m in block["memories"]) == DAY_17 | DAY_18
    # a question about one thing still gets that thing, not the whole week
    block = mem.recall("上周去医院复查了吗", now=NOW)
    assert "医院复查" in block["memories"][0]["text"] and not _named(m["text"] for m in block["memories"]) >= DAY_17


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Shanghai", "Pacific/Kiritimati"])
def test_the_same_days_are_kept_in_any_zone(make_memory, zone, monkeypatch):
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")  # the process's own zone is 25 hours from Kiritimati
    time.tzset()
    try:
        mem = make_memory(NOTES, timezone=zone)
        hits = mem.search("我干了什么", since="2026-11-25", until="2026-11-25", limit=20)
        assert _named(h.content for h in hits) == DAY_25
        hits = mem.search("我前天干了什么", now=NOW, limit=20, explain=True)
        assert _named(h.content for h in hits if h.explain["in_window"]) == DAY_25
        assert _named(m["text"] for m in mem.recent(since="2026-11-25", until="2026-11-25", limit=20)) == \
            DAY_25 - DOCUMENTS
        # a moment with an offset is that moment in the user's zone: 02:00 UTC on the 27th
        moment = datetime(2026, 11, 27, 2, 0, tzinfo=ZoneInfo("UTC"))
        local = moment.astimezone(ZoneInfo(zone)).date()
        hits = mem.search("我昨天干了什么", now=moment.isoformat(), limit=20, explain=True)
        assert hits[0].explain["window"].startswith((local - timedelta(days=1)).isoformat())
    finally:
        monkeypatch.undo()
        time.tzset()


def test_add_and_today_follow_the_configured_zone_not_the_process(make_memory, monkeypatch):
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")  # UTC-11: always another day than UTC+14
    time.tzset()
    try:
        mem = make_memory({}, timezone="Pacific/Kiritimati")
        before = datetime.now(ZoneInfo("Pacific/Kiritimati")).date().isoformat()
        res = mem.add("今天去图书馆还了三本书", type="episodic")
        after = datetime.now(ZoneInfo("Pacific/Kiritimati")).date().isoformat()
        day = res["uri"].rsplit("/", 1)[-1][:-3]
        assert day in (before, after)
        listed = mem.recent(since=day, until=day)
        assert [m["text"].split(": ", 1)[1] for m in listed] == ["今天去图书馆还了三本书"]
        if day == after:  # today's time words name the zone's day (unless midnight passed in between)
            hit = mem.search("我今天干了什么", explain=True)[0]
            assert hit.explain["in_window"] and hit.date.startswith(day)
            assert mem.recent(since="0d")[0]["id"] == res["id"]
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("zone,day", [("Asia/Shanghai", "2026-11-26"), ("America/Los_Angeles", "2026-11-25")])
def test_an_imported_moment_lands_on_its_day_in_the_configured_zone(make_memory, tmp_path, zone, day, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        export = tmp_path / "mem0.json"
        export.write_text(json.dumps([{"id": "m1", "memory": "Adopted a grey cat named Mochi",
                                       "created_at": "2026-11-25T20:30:00Z"}]), encoding="utf-8")
        mem = make_memory({}, timezone=zone)
        mem.import_notes(str(export))
        listed = mem.recent(since=day, until=day)
        assert [m["text"] for m in listed] == [f"- {day}: Adopted a grey cat named Mochi"]
    finally:
        monkeypatch.undo()
        time.tzset()


def test_an_unknown_zone_is_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown timezone 'Asia/Shangai'; give an IANA name such as Asia/Shanghai"):
        config.load(home=tmp_path, env={"MDMEM_TIMEZONE": "Asia/Shangai"})
    (tmp_path / "config.toml").write_text('timezone = "Mars/Olympus"\n', encoding="utf-8")
    r = _mdmem(tmp_path, "search", "x")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Mars/Olympus" in r.stderr
    assert config.load(home=tmp_path, env={"MDMEM_TIMEZONE": "America/Los_Angeles"}).timezone == "America/Los_Angeles"


def _mdmem(home, *args):
    return mdmem("--home", str(home), *args, base_env={k: v for k, v in os.environ.items() if k != "MDMEM_HOME"})


def test_the_command_line_lists_and_finds_the_whole_day(tmp_path):
    home = tmp_path / "home"
    write_notes(home, NOTES)
    (home / "config.toml").write_text('timezone = "Asia/Shanghai"\n', encoding="utf-8")
    assert _mdmem(home, "index").returncode == 0
    r = _mdmem(home, "search", "我干了什么", "--since", "2026-11-25", "--until", "2026-11-25", "--limit", "20", "--json")
    assert r.returncode == 0, r.stderr
    assert _named(h["content"] for h in json.loads(r.stdout)["results"]) == DAY_25
    r = _mdmem(home, "search", "我前天干了什么", "--json", "--explain", "--now", NOW, "--limit", "20")
    hits = json.loads(r.stdout)["results"]
    assert _named(h["content"] for h in hits if h["explain"]["in_window"]) == DAY_25
    assert all(h["explain"]["in_window"] == (h["date"] or "")[:10].startswith("2026-11-25") for h in hits)
    r = _mdmem(home, "recent", "--since", "2026-11-25", "--until", "2026-11-25", "--limit", "20")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert _named(lines) == DAY_25 - DOCUMENTS and len(lines) == 7
    # newest first; a date without a time is the start of its day
    assert lines[0].startswith("2026-11-25 23:59") and lines[-2].startswith("2026-11-25 00:00") and "绿萝" in lines[-1]
    r = _mdmem(home, "recent", "--since", "1d", "--now", NOW, "--json", "--limit", "20")
    assert _named(m["text"] for m in json.loads(r.stdout)["results"]) == DAY_26 | {"改方案"}
    r = _mdmem(home, "recent", "--since", "2026-11-26", "--until", "2026-11-25")
    assert r.returncode == 2 and "swap the two days" in r.stderr


def test_the_daemon_and_mcp_keep_the_days_in_the_configured_zone(tmp_path):
    from mcp_calls import call_tools
    from daemon_harness import Served

    d = Served(tmp_path)
    write_notes(d.notes, NOTES)
    (d.home / "config.toml").write_text('timezone = "Pacific/Kiritimati"\n', encoding="utf-8")
    d.env = {**d.env, "TZ": "Pacific/Pago_Pago"}  # the daemon's own zone: always another day
    d.start()
    try:
        r = d.cli("search", "我干了什么", "--since", "2026-11-25", "--until", "2026-11-25", "--limit", "20", "--json")
        assert r.returncode == 0, r.stderr
        assert _named(h["content"] for h in json.loads(r.stdout)["results"]) == DAY_25
        recent, = call_tools(d.args, d.env, [("memory_recent", {"since": "2026-11-25", "until": "2026-11-25",
                                                                 "limit": 20})], open(tmp_path / "stderr.txt", "w"))
        listed = json.loads(recent.content[0].text)["results"]
        assert _named(m["text"] for m in listed) == DAY_25 - DOCUMENTS
        before = datetime.now(ZoneInfo("Pacific/Kiritimati")).date().isoformat()
        r = d.cli("add", "今天去图书馆还了三本书", "--type", "episodic", "--json")
        after = datetime.now(ZoneInfo("Pacific/Kiritimati")).date().isoformat()
        assert r.returncode == 0, r.stderr
        day = json.loads(r.stdout)["uri"].rsplit("/", 1)[-1][:-3]
        assert day in (before, after)
        r = d.cli("recent", "--since", day, "--until", day, "--json")
        listed = json.loads(r.stdout)["results"]
        assert "今天去图书馆还了三本书" in [m["text"].split(": ", 1)[1] for m in listed]
        assert all(m["date"].startswith(day) for m in listed)
    finally:
        assert d.stop() == 0, d.log.read_text()
