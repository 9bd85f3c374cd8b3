"""`add`: the right note, inside the store, deduplicated, appended without losing anyone's edit."""

import json
import os
import subprocess
import sys
from datetime import datetime

import pytest

from cli_process import command
from indexer import config
from indexer.errors import InputError
from indexer.notes.append import Target, append_entry, choose_target, format_entry, safe_uri
from racing_editor import EDITOR

DISTRACTORS = {
    "user/health.md": "# Health\n\n- I run 5 km every Saturday morning along the river.\n- 我对花粉过敏，春天要带口罩。\n",
    "user/people.md": "# People\n\n- Alice is my manager; she prefers short written updates.\n- 小王是我的大学同学，住在成都。\n",
}


def test_target_choice(tmp_path):
    cfg = config.load(home=tmp_path / "h", project=tmp_path / "p", env={})
    now = datetime(2025, 1, 5, 14, 3)
    assert choose_target(cfg, "preference", now=now).uri == "user/preference.md"
    assert choose_target(cfg, "entity", now=now).store == "global"
    t = choose_target(cfg, "decision", now=now)
    assert (t.store, t.uri) == ("project", "journal/2025-01-05.md")
    t = choose_target(cfg.with_(project=None), "episodic", now=now)
    assert (t.store, t.uri) == ("global", "journal/2025-01-05.md")  # no project: global journal
    with pytest.raises(InputError, match="no project"):
        choose_target(cfg.with_(project=None), "fact", scope="project")
    assert choose_target(cfg, "fact", file="agent/notes").uri == "agent/notes.md"
    with pytest.raises(InputError, match="type must be one of"):
        choose_target(cfg, "secret")


@pytest.mark.parametrize("bad", ["../x.md", "a/../../x.md", "/etc/passwd.md", "~/x.md", ".hidden/x.md", "x.txt"])
def test_file_outside_or_unindexable_is_refused(tmp_path, bad):
    with pytest.raises(InputError):
        safe_uri(tmp_path, bad)


def test_symlink_escape_is_refused(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "note.md").symlink_to(outside / "n.md")
    for bad in ("link/x.md", "note.md"):
        with pytest.raises(InputError, match="symlink"):
            safe_uri(root, bad)


def test_add_preference_is_top_recall_hit_in_english_and_chinese(make_memory):
    mem = make_memory(DISTRACTORS)
    res = mem.add("I prefer my coffee black, without sugar or milk.", type="preference")
    assert res["action"] == "appended" and res["uri"] == "user/preference.md" and res["indexed"]
    lines = (mem.cfg.home / res["uri"]).read_text().split("\n")[res["start_line"] - 1:res["end_line"]]
    assert "coffee black" in "\n".join(lines)
    out = mem.recall("How does the user like to drink coffee?")
    top = out["memories"][0]
    assert "coffee black" in top["text"]
    assert (top["uri"], top["start_line"], top["end_line"]) == (res["uri"], res["start_line"], res["end_line"])
    mem.add("我不吃香菜，点菜时请避开香菜。", type="preference")
    out = mem.recall("用户点菜有什么忌口？")
    assert "香菜" in out["memories"][0]["text"]


def test_adding_twice_reinforces_instead_of_duplicating(make_memory):
    mem = make_memory(DISTRACTORS)
    first = mem.add("I prefer my coffee black, without sugar or milk.", type="preference")
    mem.add("Alice wants the weekly report on Fridays.", type="preference")  # same note, so chunks merge
    again = mem.add("I prefer my coffee black without sugar or milk", type="preference")
    assert again["action"] == "reinforced" and again["similarity"] >= 0.95
    assert again["uri"] == first["uri"] and again["start_line"] <= first["start_line"] <= again["end_line"]
    assert again["reinforcement"] >= 1
    text = (mem.cfg.home / "user/preference.md").read_text()
    assert text.count("coffee black") == 1


def test_existing_text_kept_byte_for_byte(make_memory):
    original = b"# Mine\r\n\r\nSome paragraph without a final newline \xe4\xb8\xad"
    mem = make_memory()
    path = mem.cfg.home / "agent" / "mine.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    res = mem.add("The staging server is rebooted every Monday.", file="agent/mine.md")
    data = path.read_bytes()
    assert data.startswith(original) and data.endswith(b"The staging server is rebooted every Monday.\r\n")
    cited = data.split(b"\r\n")[res["start_line"] - 1:res["end_line"]]
    assert any(line.startswith(b"- ") and b"staging server" in line for line in cited)
    assert mem.search("staging server reboot", limit=1)[0].uri == "agent/mine.md"


def test_new_note_gets_heading_and_front_matter(make_memory):
    mem = make_memory()
    res = mem.add("We ship releases on Tuesdays.", type="decision", importance=4)
    text = (mem.cfg.project / res["uri"]).read_text()
    assert text.startswith("---\ntype: episodic\n---\n\n# Journal ")  # the day's journal, shared by every type
    assert "**Decision:** We ship releases on Tuesdays. <!-- type: decision --> <!-- importance: 4 -->" in text
    assert res["store"] == "project" and res["uri"].startswith("journal/")


def test_format_entry_indents_continuation_lines():
    entry = format_entry("first line\n\nsecond line", "fact", journal=False, now=datetime(2025, 1, 5))
    assert entry == "- 2025-01-05: first line\n\n  second line\n"


def test_cli_add_json_and_refusals(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(tmp_path / "h"), "--create", "--embedder", "none")
    r = subprocess.run(base + ["add", "-", "--type", "preference", "--json"], input="I like quiet mornings.\n",
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["action"] == "appended"
    r = subprocess.run(base + ["add", "x", "--file", "../x.md"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "leaves the store root" in r.stderr and not (tmp_path / "x.md").exists()
    key = "AKIA" + "IOSFODNN7EXAMPLQ"
    r = subprocess.run(base + ["add", f"aws key {key}"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "AWS access key id" in r.stderr and key not in r.stderr + r.stdout


def test_50_concurrent_adds_and_an_editor_lose_nothing(tmp_path):
    home = tmp_path / "h"
    note = home / "agent" / "shared.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Shared\n\nfirst paragraph by the user\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    stop = tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(stop)], stdout=subprocess.PIPE, text=True)
    adders = [subprocess.Popen(command("--home", str(home), "--embedder", "none", "add",
                                f"concurrent memory number {i:02d}", "--file", "agent/shared.md"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
              for i in range(50)]
    for p in adders:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    stop.touch()
    edits = int(editor.communicate(timeout=60)[0])
    text = note.read_text()
    missing = [i for i in range(50) if f"concurrent memory number {i:02d}" not in text]
    assert not missing, f"lost adds: {missing}"
    assert all(f"editor line {n}" in text for n in range(edits)), "an editor save was lost"
    assert "first paragraph by the user" in text
    assert not list(note.parent.glob(".*.tmp"))


def test_append_entry_creates_note_once_under_race(tmp_path):
    target = Target("global", tmp_path, "user/fact.md", tmp_path / "user/fact.md", "Facts")
    start, end = append_entry(target, "- a\n", "# Facts\n\n")
    assert (start, end) == (3, 3)
    assert append_entry(target, "- b\n", "# Facts\n\n") == (4, 4)
    assert (tmp_path / "user/fact.md").read_text() == "# Facts\n\n- a\n- b\n"


def test_add_appends_to_the_stores_existing_note_of_that_type(make_memory):
    mem = make_memory({
        "user/preferences.md": "---\ntype: preference\n---\n\n# Preferences\n\n- 2025-01-05: I like quiet mornings.\n",
        "user/rules.md": "---\ntype: instruction\n---\n\n# Rules\n\n- Answer in Chinese.\n",
        "user/people/a.md": "---\ntype: entity\n---\n\n# A\n\nAlice, the accountant.\n",
        "user/people/b.md": "---\ntype: entity\n---\n\n# B\n\nBob, the DBA.\n",
    })
    res = mem.add("I prefer my coffee black.", type="preference")
    assert res["uri"] == "user/preferences.md" and not (mem.cfg.home / "user/preference.md").exists()
    assert mem.add("Write commit messages in English.", type="instruction")["uri"] == "user/rules.md"
    # notes of that type elsewhere (people/) are not one note to append to: the default note is made
    assert mem.add("Carol runs the payroll.", type="entity")["uri"] == "user/entity.md"
    hit = mem.search("coffee black", mode="fts", limit=1)[0]
    assert (hit.uri, hit.start_line, hit.end_line) == (res["uri"], res["start_line"], res["end_line"])
