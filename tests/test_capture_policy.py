"""Which capture policy mem0's add runs in a real daemon: infer=False keeps every message, infer=True (no LLM
configured) keeps the trigger sentences, `capture` names one per call, and [capture] sets it globally and per
space."""

from __future__ import annotations

import threading

import pytest

from http_daemon import serving
from indexer import config
from indexer.capture import policy
from indexer.errors import ConfigError

CHAT = [{"role": "user", "name": "Mira", "content": "Hi there! 😊 I'm allergic to hazelnuts, remember that."},
        {"role": "assistant", "name": "Flux", "content": "Oh no! Thanks for telling me. How was your day?"},
        {"role": "user", "name": "Mira", "content": "lol fine, thanks"},
        {"role": "user", "name": "Mira", "content": "我下周五要去苏州出差。哈哈"}]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("capture")
    (base / "home").mkdir()
    (base / "home" / "config.toml").write_text('[capture]\npolicy = "raw"\nspaces = {bob = "triggers"}\n',
                                               encoding="utf-8")
    with serving(base) as srv:
        yield srv


def notes(server, space: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((server.home / "spaces" / space).rglob("*.md")))


def added(server, path: str, body: dict) -> list[str]:
    status, out = server.call("POST", path, body)
    assert status == 200, out
    assert all(r["event"] == "ADD" for r in out["results"])
    return [r["memory"] for r in out["results"]]


def test_infer_false_keeps_every_message_as_it_was_said(server):
    got = added(server, "/v3/memories/add/", {"messages": CHAT, "user_id": "ann", "infer": False})
    assert got == [m["content"] for m in CHAT]
    assert "**Mira:** lol fine, thanks" in notes(server, "ann")


def test_infer_true_without_an_llm_keeps_the_sentences_that_state_facts_with_their_speaker(server):
    got = added(server, "/memories", {"messages": CHAT, "user_id": "cai", "infer": True})
    assert got == ["I'm allergic to hazelnuts, remember that.", "我下周五要去苏州出差。"]
    text = notes(server, "cai")
    assert "**Mira:** I'm allergic to hazelnuts, remember that." in text and "**Mira:** 我下周五要去苏州出差。" in text
    assert "lol" not in text and "How was your day" not in text and "哈哈" not in text
    status, found = server.call("POST", "/v3/memories/search/", {"query": "hazelnut allergy",
                                                                 "filters": {"user_id": "cai"}})
    assert status == 200 and "hazelnuts" in found["results"][0]["memory"]


def test_without_infer_the_spaces_own_policy_applies_else_the_global_one(server):
    assert added(server, "/memories", {"messages": CHAT, "user_id": "bob"}) == [
        "I'm allergic to hazelnuts, remember that.", "我下周五要去苏州出差。"]
    assert len(added(server, "/memories", {"messages": CHAT, "user_id": "dee"})) == len(CHAT)


def test_capture_per_call_wins_and_llm_without_an_llm_is_refused_with_the_fix(server):
    assert added(server, "/memories", {"messages": CHAT, "user_id": "gus", "capture": "triggers"}) == [
        "I'm allergic to hazelnuts, remember that.", "我下周五要去苏州出差。"]  # over the global raw
    status, out = server.call("POST", "/memories", {"messages": CHAT, "user_id": "eve", "capture": "llm"})
    assert status == 400 and "[llm]" in str(out)
    status, out = server.call("POST", "/memories", {"messages": CHAT, "user_id": "eve", "capture": "smart"})
    assert status == 400 and "raw, triggers, llm" in str(out)
    assert not (server.home / "spaces" / "eve").exists()  # a refused call writes nothing


@pytest.mark.unit
def test_the_capture_settings_are_read_from_the_file_and_the_environment_and_checked(tmp_path):
    (tmp_path / "config.toml").write_text('[capture]\npolicy = "triggers"\nspaces = {alice = "raw"}\n', encoding="utf-8")
    cfg = config.load(home=tmp_path, env={})
    assert (cfg.capture_policy, cfg.capture_spaces) == ("triggers", (("alice", "raw"),))
    assert [policy.chosen(cfg, s) for s in ("alice", "bob", None)] == ["raw", "triggers", "triggers"]
    assert policy.chosen(cfg, "alice", infer=True) == "triggers" and policy.chosen(cfg, "bob", infer=False) == "raw"
    assert policy.chosen(cfg.with_(llm="ollama", llm_model="m"), "alice", infer=True) == "llm"
    env = config.load(home=tmp_path, env={"MDMEM_CAPTURE_SPACES": "bob=triggers, eve=raw"})
    assert env.capture_spaces == (("bob", "triggers"), ("eve", "raw"))
    for bad in ('policy = "smart"', 'policy = "llm"', 'spaces = {alice = 3}'):
        (tmp_path / "config.toml").write_text(f"[capture]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="capture"):
            config.load(home=tmp_path, env={})


def test_an_environment_entry_without_a_policy_is_refused_as_the_toml_form_is(tmp_path):
    for bad, entry in (("alice=llm,bob", "'bob'"), ("alice", "'alice'"), ("=raw", "'=raw'"), ("eve=", "'eve='")):
        with pytest.raises(ConfigError, match=f"MDMEM_CAPTURE_SPACES entry {entry} is not SPACE=POLICY"):
            config.load(home=tmp_path, env={"MDMEM_CAPTURE_SPACES": bad})
    assert config.load(home=tmp_path, env={"MDMEM_CAPTURE_SPACES": "bob=raw,"}).capture_spaces == (("bob", "raw"),)


def test_lines_appended_while_the_later_pass_rewrites_the_pending_list_are_all_kept(tmp_path):
    done = threading.Event()
    rewrites = []

    def later_pass():  # as later.extract_pending: read the list, keep every entry, swap the file in
        while not done.is_set() or not rewrites:
            read = policy.pending(tmp_path)
            policy.rewrite_pending(tmp_path, len(read), read)
            rewrites.append(len(read))

    def capture(n: int):  # as mem0's add on the HTTP thread pool: one line per failed turn
        for i in range(40):
            policy.mark_pending(tmp_path, f"s{n}", [f"{n:08x}{i:08x}"], "the LLM timed out")
    passes = threading.Thread(target=later_pass)
    passes.start()
    writers = [threading.Thread(target=capture, args=(n,)) for n in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    passes.join()
    assert rewrites and sorted(i for p in policy.pending(tmp_path) for i in p["ids"]) == sorted(
        f"{n:08x}{i:08x}" for n in range(4) for i in range(40))


def test_an_unknown_policy_is_named_with_where_it_may_be_set(tmp_path):
    for env in ({"MDMEM_CAPTURE_SPACES": "alice=nonsense"}, {"MDMEM_CAPTURE_POLICY": "nonsense"}):
        with pytest.raises(ConfigError, match="unknown capture policy 'nonsense' .*MDMEM_CAPTURE_SPACES"):
            config.load(home=tmp_path, env=env)


def test_a_line_a_crash_tore_neither_stops_the_pending_list_nor_swallows_the_next_entry(tmp_path):
    policy.mark_pending(tmp_path, "alice", ["0000000100000001"], "the LLM timed out")
    with open(tmp_path / policy.PENDING_FILE, "a", encoding="utf-8") as f:
        f.write('{"space": "bob", "ids": ["00000002')  # the process died mid-append
    policy.mark_pending(tmp_path, "carol", ["0000000300000003"], "the LLM timed out")
    read = policy.pending(tmp_path)
    assert [e["ids"] for e in read] == [["0000000100000001"], [], ["0000000300000003"]]
    policy.rewrite_pending(tmp_path, len(read), [read[0], read[2]])  # as a pass that kept both turns
    assert [e["space"] for e in policy.pending(tmp_path)] == ["alice", "carol"]


def test_the_pending_rewrite_is_whole_private_and_its_folder_synced_after_the_swap(tmp_path, monkeypatch):
    import json
    import os
    policy.mark_pending(tmp_path, "alice", ["0000000100000001"], "the LLM timed out")
    policy.mark_pending(tmp_path, "bob", ["0000000200000002"], "the LLM timed out")
    synced = []
    real = os.fsync

    def fsync(fd):  # which path each fsync made durable, and what the list held by then
        held = (tmp_path / policy.PENDING_FILE).read_text(encoding="utf-8")  # the rewrite holds the list's lock
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), [json.loads(ln)["space"] for ln in held.splitlines()]))
        real(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    policy.rewrite_pending(tmp_path, 1, [])
    assert [e["space"] for e in policy.pending(tmp_path)] == ["bob"]
    assert (tmp_path / policy.PENDING_FILE).stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [policy.PENDING_FILE]  # no temp file left beside it
    # before: the file's temp copy was synced, the folder never, so a crash after the rename could bring
    # back the list the pass had replaced (its turns extracted again, their tries forgotten)
    assert (str(tmp_path), ["bob"]) in synced, synced


def test_a_character_a_crash_tore_is_an_unreadable_line_not_a_stopped_list(tmp_path):
    policy.mark_pending(tmp_path, "alice", ["0000000100000001"], "the LLM timed out")
    with open(tmp_path / policy.PENDING_FILE, "ab") as f:
        f.write('{"space": "李'.encode("utf-8")[:-1])  # the process died inside a Chinese character
    policy.mark_pending(tmp_path, "carol", ["0000000300000003"], "the LLM timed out")
    read = policy.pending(tmp_path)
    assert [e["ids"] for e in read] == [["0000000100000001"], [], ["0000000300000003"]]
