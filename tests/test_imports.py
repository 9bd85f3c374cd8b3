"""Imports of SillyTavern chats, lorebooks and cards and of mem0 exports: what they write, idempotence, refusals."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_process import command
from indexer.errors import InputError
from indexer.notes.imports_formats import detect, parse_file
from indexer.notes.imports_model import parse_when, read_text

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
CHAT = FIXTURES / "sillytavern" / "chats" / "Seraphina" / "Seraphina - 2024-6-5 @14h 56m 50s 682ms.jsonl"
WORLD = FIXTURES / "sillytavern" / "worlds" / "Eldoria.json"
CARD = FIXTURES / "sillytavern" / "characters" / "Seraphina.json"
PNG_CARD = FIXTURES / "sillytavern" / "characters" / "Lyra.png"
MEM0 = FIXTURES / "mem0" / "get_all.json"


pytestmark = pytest.mark.usefixtures("utc")  # mem0 and chat stamps become local dates: pin the zone


def notes_under(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md")) if ".locks" not in p.parts}


@pytest.mark.parametrize("stamp, expected", [
    ("June 5, 2024 2:58pm", "2024-06-05 14:58"),
    ("June 5, 2024 12:03am", "2024-06-05 00:03"),
    ("2024-7-12@01h31m37s", "2024-07-12 01:31"),
    ("2024-6-6 @09h 15m 02s 113ms", "2024-06-06 09:15"),
    ("2024-06-05T12:59:01.211Z", "2024-06-05 12:59"),
    (1717599541000, "2024-06-05 14:59"),
])
def test_every_stamp_format_sillytavern_has_written_is_read(stamp, expected):
    assert parse_when(stamp).strftime("%Y-%m-%d %H:%M") == expected


def test_formats_are_recognised_from_content_not_names(tmp_path):
    for src, fmt in [(CHAT, "sillytavern-chat"), (WORLD, "sillytavern-lorebook"), (CARD, "sillytavern-card"),
                     (MEM0, "mem0")]:
        renamed = tmp_path / f"export{len(fmt)}.txt"
        shutil.copy(src, renamed)
        assert detect(renamed, read_text(renamed)) == fmt, src.name
    assert parse_file(PNG_CARD)[0] == "sillytavern-card"


def test_chat_becomes_dated_journal_items_in_the_characters_space(make_memory):
    mem = make_memory()
    rep = mem.import_notes(CHAT)
    assert rep["added"] == 5 and rep["indexed"]  # the empty system message carries nothing
    day1 = (mem.cfg.home / "spaces/Seraphina/journal/2024-06-05.md").read_text(encoding="utf-8")
    assert "- 14:58: **Mira:** Thank you. I'm allergic to moonpetal" in day1
    assert "\n\n  Rest now; the wards" in day1  # a second paragraph stays inside its message's item
    day2 = (mem.cfg.home / "spaces/Seraphina/journal/2024-06-06.md").read_text(encoding="utf-8")
    assert "- 09:15: **Mira:** 早上好！我想明天去山谷里的温泉" in day2
    hits = mem.search("温泉", mode="fts", space="Seraphina")
    assert hits and hits[0].uri == "spaces/Seraphina/journal/2024-06-06.md"
    hits = mem.search("allergic to moonpetal", space="Seraphina")
    assert not mem.search("allergic to moonpetal")  # outside its space the chat is not found
    assert hits[0].uri == "spaces/Seraphina/journal/2024-06-05.md" and "moonpetal" in hits[0].content


def test_lorebook_is_one_note_with_a_section_per_entry_keys_as_tags_and_disabled_marked(tmp_path, make_memory):
    mem = make_memory(embedder=None)
    mem.import_notes(WORLD)
    note = (mem.cfg.home / "lore/Eldoria.md").read_text(encoding="utf-8")
    assert note.startswith("---\ntype: entity\ntags: [\"Eldoria\", \"forest\"")
    assert "## 山谷温泉\n\nKeys: 温泉, 山谷\n\n山谷深处有一处温泉" in note
    assert "## The old king (draft) (disabled)\n\nKeys: old king\n\n*Disabled in the source lorebook.*" in note
    assert note.index("## Eldoria forest") < note.index("## The glade")  # SillyTavern's display order


def test_card_books_go_to_the_characters_space_json_and_png(make_memory):
    mem = make_memory(embedder=None)
    mem.import_notes(CARD)
    mem.import_notes(PNG_CARD)
    home = mem.cfg.home
    seraphina = (home / "spaces/Seraphina/lore/Seraphina-s-memories.md").read_text(encoding="utf-8")
    assert "## Silverleaf\n\nKeys: silverleaf\n\nSilverleaf is Seraphina's healing herb" in seraphina
    assert "## Lyra (disabled)" in seraphina  # "enabled": false in the card's book
    assert (home / "spaces/Lyra/lore/Lyra-s-book.md").exists()


def test_mem0_export_lands_in_each_users_or_agents_space(make_memory):
    mem = make_memory(embedder=None)
    rep = mem.import_notes(MEM0)
    assert rep["added"] == 4 and rep["notes"] == 3
    alice = (mem.cfg.home / "spaces/alice/user/fact.md").read_text(encoding="utf-8")
    assert "- 2024-07-20: Is vegetarian and allergic to peanuts\n- 2024-07-21: Works as a nurse" in alice
    assert "- 2024-08-03: 喜欢在周末爬山" in (mem.cfg.home / "spaces/wei/user/fact.md").read_text(encoding="utf-8")
    assert "Answers in short bullet points" in (mem.cfg.home / "spaces/support-bot/user/fact.md").read_text()
    assert "alice" not in (mem.cfg.home / "spaces/wei/user/fact.md").read_text()


def test_space_option_puts_everything_in_one_space(make_memory):
    mem = make_memory(embedder=None)
    mem.import_notes(MEM0, space="family")
    assert set(notes_under(mem.cfg.home)) == {"spaces/family/user/fact.md"}


def test_a_second_run_adds_nothing_and_a_grown_chat_adds_only_its_new_messages(tmp_path, make_memory):
    mem = make_memory(embedder=None)
    first = mem.import_notes(FIXTURES)
    before = notes_under(mem.cfg.home)
    again = mem.import_notes(FIXTURES)
    assert first["added"] == 17 and again["added"] == 0 and again["present"] == 17 and again["written"] == []
    assert notes_under(mem.cfg.home) == before
    grown = tmp_path / "grown.jsonl"
    line = {"name": "Mira", "is_user": True, "send_date": "2024-6-6 @10h 00m 00s 000ms", "mes": "Let's go at dawn."}
    grown.write_text(CHAT.read_text(encoding="utf-8") + json.dumps(line) + "\n", encoding="utf-8")
    rep = mem.import_notes(grown)
    assert rep["added"] == 1 and rep["present"] == 5
    day2 = (mem.cfg.home / "spaces/Seraphina/journal/2024-06-06.md").read_text(encoding="utf-8")
    assert day2.count("**Mira:**") == 2 and day2.rstrip().endswith("- 10:00: **Mira:** Let's go at dawn.")


def test_an_edited_note_keeps_the_users_edits_and_gets_only_what_it_lacks(make_memory):
    mem = make_memory(embedder=None)
    mem.import_notes(MEM0)
    path = mem.cfg.home / "spaces/alice/user/fact.md"
    edited = path.read_text(encoding="utf-8").replace("- 2024-07-21: Works as a nurse on night shifts\n", "")
    path.write_text(edited + "- 2024-09-01: My own note\n", encoding="utf-8")
    mem.import_notes(MEM0)
    text = path.read_text(encoding="utf-8")
    assert "- 2024-09-01: My own note" in text and text.count("Works as a nurse") == 1


def test_dry_run_writes_nothing(make_memory):
    mem = make_memory(embedder=None)
    rep = mem.import_notes(FIXTURES, dry_run=True)
    assert rep["added"] == 17 and rep["notes"] == 8 and rep["written"] == []
    assert notes_under(mem.cfg.home) == {}


def test_secrets_in_old_chats_are_masked_before_they_reach_a_note(tmp_path, make_memory):
    chat = tmp_path / "chat.jsonl"
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    chat.write_text(json.dumps({"user_name": "Mira", "character_name": "Bot", "create_date": "2024-6-5@10h00m00s"})
                    + "\n" + json.dumps({"name": "Mira", "is_user": True, "send_date": "June 5, 2024 10:01am",
                                         "mes": f"my key is {key}"}) + "\n", encoding="utf-8")
    mem = make_memory(embedder=None)
    rep = mem.import_notes(chat)
    text = (mem.cfg.home / "spaces/Bot/journal/2024-06-05.md").read_text(encoding="utf-8")
    assert rep["redacted"] == 1 and key not in text and "my key is" in text


def test_a_malformed_file_names_file_and_line_and_nothing_is_written(tmp_path, make_memory):
    folder = tmp_path / "export"
    shutil.copytree(FIXTURES, folder)
    bad = folder / "sillytavern" / "chats" / "Seraphina" / "broken.jsonl"
    lines = CHAT.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]  # a line cut off mid-object, as a crash during save leaves it
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mem = make_memory(embedder=None)
    with pytest.raises(InputError) as err:
        mem.import_notes(folder)
    assert f"{bad}:3: not valid JSON" in str(err.value) and "\n" not in str(err.value)
    assert notes_under(mem.cfg.home) == {}


@pytest.mark.parametrize("content, reason", [
    ('{"user_name": "a", "character_name": "b"}\n[1, 2]\n', ":2: a message must be an object"),
    ('{"entries": {"0": {"uid": 0, "content": 5}}}', "has no \"content\" text"),
    ('{"results": [{"id": "1", "memory": null}]}', "has no \"memory\" text"),
    ('{"results": [{"id": "1", "memory": "x", "user_id": "../etc"}]}', "not a usable name"),
    ('{"hello": "world"}', "not a format mdmem imports; pass --format"),
])
def test_bad_content_is_a_one_line_error(tmp_path, content, reason):
    f = tmp_path / "in.json"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        parse_file(f)
    assert reason in str(err.value) and str(f) in str(err.value)


def test_a_folder_skips_files_of_other_kinds_with_a_warning(tmp_path, make_memory):
    folder = tmp_path / "st"
    shutil.copytree(FIXTURES / "mem0", folder)
    (folder / "settings.json").write_text('{"theme": "dark"}', encoding="utf-8")
    warnings = []
    mem = make_memory(embedder=None)
    mem._warn = warnings.append
    rep = mem.import_notes(folder)
    assert rep["added"] == 4 and rep["skipped"] == [str(folder / "settings.json")] and "settings.json" in warnings[0]


def test_cli_import_prints_a_summary_then_adds_nothing_the_second_time(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TZ": "UTC"}
    home = tmp_path / "home"
    home.mkdir()
    cmd = command("--home", str(home), "--embedder", "none", "import", str(FIXTURES))
    first = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    assert "added 17 memories to 8 notes, 0 already there" in first.stdout
    second = subprocess.run(cmd + ["--json"], capture_output=True, text=True, env=env)
    assert json.loads(second.stdout)["added"] == 0
    bad = subprocess.run(cmd[:-1] + [str(tmp_path / "missing")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no such file or folder" in bad.stderr


def test_every_registered_format_is_a_name_a_user_may_pass():
    """names.IMPORT_FORMATS (light, for the thin client's --format) and the registrations say the same."""
    from indexer.notes.imports_formats import GROUP, REGISTRY
    from indexer.notes.names import IMPORT_FORMATS
    assert {f.name for f in REGISTRY} - {GROUP} == set(IMPORT_FORMATS)
