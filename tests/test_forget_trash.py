"""`forget --match` removes only the memories holding the words named; every removal can be undone (`restore`),
or purged everywhere at once; the trash is private and the cleanup pass empties what is past its retention."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess

import pytest

from cli_process import command
from conftest import write_notes
from daemon_harness import Served

from indexer.daemon import mem0_events
from indexer.errors import InputError, NotFoundError

EIGHT = ["我对花生过敏。", "我妈妈喜欢种花。", "我女儿在学钢琴。", "我不吃香菜。", "I am allergic to cat hair.",
         "My wife works at the city library.", "我住在杭州。", "I drink green tea every morning."]
NOTE = "# Facts\n\n" + "".join(f"- 2026-11-0{i + 1}: {t}\n" for i, t in enumerate(EIGHT))
URI = "user/fact.md"


def _note(mem) -> str:
    return (mem.cfg.home / URI).read_text(encoding="utf-8")


def _said(memories) -> list[str]:
    return [m["text"].split(": ", 1)[1] for m in memories]


def test_forget_match_removes_only_the_memories_that_hold_the_words(make_memory):
    mem = make_memory({URI: NOTE})
    wife = mem.forget_matching("my wife")
    assert _said(wife["memories"]) == ["My wife works at the city library."]
    assert not any("女儿" in m["text"] for m in wife["memories"] + wife["similar"])
    allergic = mem.forget_matching("ALLERGIC")  # any case, whole words
    assert _said(allergic["memories"]) == ["I am allergic to cat hair."]
    assert all(m["id"] != allergic["memories"][0]["id"] for m in allergic["similar"])
    assert mem.forget_matching("allerg")["memories"] == []  # part of a word is not the word
    assert _said(mem.forget_matching("cat allergic")["memories"]) == ["I am allergic to cat hair."]
    assert mem.forget_matching("cat peanut")["memories"] == []  # every word must be there
    with pytest.raises(InputError, match="no word to look for"):
        mem.forget_matching("!!!")
    gone = mem.forget_matching("香菜", yes=True)
    assert gone["action"] == "forgotten" and _said(gone["memories"]) == ["我不吃香菜。"]
    assert _note(mem) == NOTE.replace("- 2026-11-04: 我不吃香菜。\n", "")  # 花生 and 种花 share 花, and stay
    assert "花生" not in json.dumps(gone["memories"], ensure_ascii=False)
    left = mem.forget_matching("allergic", yes=True)
    assert _said(left["memories"]) == ["I am allergic to cat hair."] and "我对花生过敏。" in _note(mem)
    assert {m["text"] for m in left["similar"]} <= {f"- 2026-11-0{i + 1}: {t}" for i, t in enumerate(EIGHT)}


def test_restore_puts_a_forgotten_memory_back_where_it_was_and_indexes_it(make_memory):
    mem = make_memory({URI: NOTE})
    gone = mem.forget_matching("香菜", yes=True)["memories"][0]
    listed = mem.trash()
    assert listed["count"] == 1 and listed["entries"][0]["id"] == gone["id"] and listed["trash_days"] == 30
    res = mem.restore(gone["id"])
    assert res["placed"] == "in_place" and (res["start_line"], res["end_line"]) == (gone["start_line"],) * 2
    assert _note(mem) == NOTE and mem.get(res["id"])["text"].endswith("我不吃香菜。")
    assert [h.id for h in mem.search("香菜", mode="fts")][:1] == [res["id"]]
    assert mem.trash()["count"] == 0
    with pytest.raises(NotFoundError, match="trash"):
        mem.restore(gone["id"])
    twice = mem.forget(res["id"])
    (mem.cfg.home / URI).write_text(NOTE, encoding="utf-8")  # written back by hand meanwhile
    assert mem.restore(twice["id"])["placed"] == "present" and _note(mem) == NOTE


def test_restore_after_the_lines_around_it_changed_or_the_note_was_deleted(make_memory):
    mem = make_memory({URI: NOTE})
    first = mem.forget(mem.forget_matching("香菜")["memories"][0]["id"])
    second = mem.forget(mem.forget_matching("杭州")["memories"][0]["id"])
    path = mem.cfg.home / URI
    path.write_text(path.read_text(encoding="utf-8").replace("我女儿在学钢琴。", "我女儿在学小提琴。")
                    .replace("I am allergic to cat hair.", "I am allergic to dogs."), encoding="utf-8")
    mem.index()
    moved = mem.restore(first["id"])
    assert moved["placed"] == "appended"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n## Restored\n\n- 2026-11-04: 我不吃香菜。\n") and mem.get(moved["id"])["uri"] == URI
    path.unlink()
    mem.index()
    back = mem.restore(second["id"])
    assert back["placed"] == "recreated" and path.read_text(encoding="utf-8") == "- 2026-11-07: 我住在杭州。\n"
    assert mem.get(back["id"])["text"] == "- 2026-11-07: 我住在杭州。"


def test_restore_after_update_gives_the_old_text_back_and_keeps_the_correction(make_memory):
    mem = make_memory({URI: NOTE})
    old = mem.forget_matching("杭州")["memories"][0]
    fixed = mem.update(old["id"], "我住在上海。")
    assert "上海" in _note(mem) and "杭州" not in _note(mem)
    entry = mem.trash()["entries"][0]
    assert entry["reason"] == "update" and entry["id"] == fixed["previous_id"] and "杭州" in entry["text"]
    res = mem.restore(fixed["previous_id"])
    assert res["placed"] == "replaced" and _note(mem) == NOTE
    kept = mem.trash()["entries"]
    assert [e["text"] for e in kept] == ["- 2026-11-07: 我住在上海。"]  # the correction can come back too
    assert mem.get(res["id"])["text"].endswith("我住在杭州。")


def test_purge_removes_it_everywhere_history_included(make_memory):
    mem = make_memory({URI: NOTE})
    tea = mem.forget_matching("green tea")["memories"][0]
    mem.forget(mem.forget_matching("杭州")["memories"][0]["id"])  # the line above tea's: its entry names tea's line
    mem0_events.record(mem.cfg.home, "ADD", [tea["id"]], None, "I drink green tea every morning.", None, None)
    mem0_events.record(mem.cfg.home, "ADD", ["0123456789abcdef"], None, "I am allergic to cat hair.", None, None)
    res = mem.forget(tea["id"], purge=True)
    assert res["action"] == "purged" and "green tea" not in _note(mem)
    history = (mem.cfg.home / mem0_events.FILE).read_text(encoding="utf-8")
    assert "green tea" not in history and "cat hair" in history
    assert mem.trash()["count"] == 1 and not mem.search("green tea", mode="fts")
    assert not any("green tea" in p.read_text(encoding="utf-8", errors="replace")
                   for p in mem.cfg.home.rglob("*") if p.is_file() and "index.db" not in p.name)
    # a memory already in the trash is purged from it
    cat = mem.forget(mem.forget_matching("cat hair")["memories"][0]["id"])
    assert mem.trash()["count"] == 2
    mem.forget(cat["id"], purge=True)
    assert mem.trash()["count"] == 1 and "cat hair" not in (mem.cfg.home / mem0_events.FILE).read_text(encoding="utf-8")
    assert not any("cat hair" in p.read_text(encoding="utf-8", errors="replace")
                   for p in mem.cfg.home.rglob("*") if p.is_file() and "index.db" not in p.name)
    assert mem.restore(mem.trash()["entries"][0]["id"])["placed"] == "in_place"  # purged lines left its context too


def test_the_trash_is_private_and_the_cleanup_pass_empties_what_is_past_retention(make_memory):
    old = os.umask(0o022)
    try:
        mem = make_memory({URI: NOTE})
        a = mem.forget(mem.forget_matching("香菜")["memories"][0]["id"])
        b = mem.forget(mem.forget_matching("杭州")["memories"][0]["id"])
    finally:
        os.umask(old)
    folder = mem.cfg.home / ".trash"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert len(files) == 2 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert not [h for h in mem.search("香菜") if h.uri.startswith(".trash")]  # never indexed
    aged = folder / f"{a['id']}.json"
    entry = json.loads(aged.read_text(encoding="utf-8"))
    entry["removed_ts"] -= 31 * 86400  # removed 31 days ago
    aged.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
    report = mem.cleanup()
    assert sum(r["trash_expired"] for r in report) == 1
    assert [e["id"] for e in mem.trash()["entries"]] == [b["id"]]
    with pytest.raises(NotFoundError):
        mem.restore(a["id"])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = Served(tmp_path_factory.mktemp("forget"))
    write_notes(d.home, {URI: NOTE})
    assert d.cli("index").returncode == 0
    yield d
    assert d.stop() in (0, None), d.log.read_text()


def _cli_flow(d: Served):
    listed = d.cli("forget", "--match", "香菜")
    assert listed.returncode == 0 and "我不吃香菜" in listed.stdout and "--yes" in listed.stderr
    assert "similar, not removed" not in listed.stdout or "我不吃香菜" not in listed.stdout.split("similar")[1]
    done = d.cli("forget", "--match", "香菜", "--yes")
    assert done.returncode == 0 and (d.home / URI).read_text(encoding="utf-8") == NOTE.replace(
        "- 2026-11-04: 我不吃香菜。\n", "")
    trash = json.loads(d.cli("trash", "--json").stdout)
    assert trash["version"] == 1 and [e["text"] for e in trash["entries"]] == ["- 2026-11-04: 我不吃香菜。"]
    assert json.loads(d.cli("restore", "--list", "--json").stdout)["entries"] == trash["entries"]
    back = d.cli("restore", trash["entries"][0]["id"])
    assert back.returncode == 0 and "where it was" in back.stdout, back.stderr
    assert (d.home / URI).read_text(encoding="utf-8") == NOTE
    again = d.cli("restore", trash["entries"][0]["id"])
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "mdmem trash" in again.stderr
    # the cleanup pass (here or the daemon's) lets go of what is past trash_days
    assert d.cli("forget", "--match", "香菜", "--yes").returncode == 0
    entry = d.home / ".trash" / f"{trash['entries'][0]['id']}.json"
    aged = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(json.dumps({**aged, "removed_ts": aged["removed_ts"] - 31 * 86400}), encoding="utf-8")
    cleaned = json.loads(d.cli("cleanup", "--json").stdout)
    assert cleaned["stores"]["global"]["trash_expired"] == 1 and not list((d.home / ".trash").glob("*.json"))
    (d.home / URI).write_text(NOTE, encoding="utf-8")
    assert d.cli("index").returncode == 0


def test_forget_match_and_restore_from_the_command_line_in_process_then_through_the_daemon(served):
    _cli_flow(served)
    served.start()
    _cli_flow(served)


def test_mcp_forget_by_words_and_restore(tmp_path):
    from mcp import ClientSession
    from mcp_calls import stdio_params
    from mcp.client.stdio import stdio_client
    home = tmp_path / "home"
    write_notes(home, {URI: NOTE})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(command("--home", str(home), "index"), env=env, check=True, timeout=300)
    params = stdio_params(["--home", str(home)], env=env)

    async def session():
        async with stdio_client(params, errlog=open(tmp_path / "stderr.txt", "w")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                call = s.call_tool
                gone = await call("memory_forget", {"query": "香菜", "confirm": True})
                wife = await call("memory_forget", {"query": "my wife"})
                listed = await call("memory_restore", {})
                entry = json.loads(listed.content[0].text)["entries"][0]
                after_forget = (home / URI).read_text(encoding="utf-8")
                back = await call("memory_restore", {"id": entry["id"]})
                missing = await call("memory_restore", {"id": entry["id"]})
                return gone, wife, after_forget, back, missing

    gone, wife, after_forget, back, missing = asyncio.run(asyncio.wait_for(session(), 240))
    assert [m["text"] for m in json.loads(gone.content[0].text)["memories"]] == ["- 2026-11-04: 我不吃香菜。"]
    assert after_forget == NOTE.replace("- 2026-11-04: 我不吃香菜。\n", "")
    listed_wife = json.loads(wife.content[0].text)
    assert [m["text"] for m in listed_wife["memories"]] == ["- 2026-11-06: My wife works at the city library."]
    assert "女儿" not in wife.content[0].text
    assert not back.is_error and json.loads(back.content[0].text)["placed"] == "in_place"
    assert (home / URI).read_text(encoding="utf-8") == NOTE
    assert missing.is_error and "trash" in missing.content[0].text


def test_http_delete_then_restore_puts_the_memory_back(tmp_path):
    from http_daemon import serving
    with serving(tmp_path) as srv:
        status, added = srv.call("POST", "/v1/memories/", {"messages": [{"role": "user", "content": "我不吃香菜。"}],
                                                          "user_id": "alice"})
        assert status == 200
        rid = added["results"][0]["id"]
        note = next((srv.home / "spaces").rglob("*.md"))
        before = note.read_text(encoding="utf-8")
        assert srv.call("DELETE", f"/v1/memories/{rid}/")[0] == 200
        assert "香菜" not in note.read_text(encoding="utf-8")
        status, back = srv.call("POST", f"/v1/memories/{rid}/restore/")
        assert status == 200 and back["memory"] == "我不吃香菜。" and back["user_id"] == "alice", back
        assert note.read_text(encoding="utf-8") == before
        status, got = srv.call("GET", f"/v1/memories/{back['id']}/")
        assert status == 200 and got["memory"] == "我不吃香菜。"
        status, missing = srv.call("POST", f"/v1/memories/{rid}/restore/")
        assert status == 404 and "trash" in missing["detail"]
