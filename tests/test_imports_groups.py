"""Imports that keep who is who: group chats under the group's name, hidden messages left out, speakers in
recall, damaged files listed while the good ones are imported (a SillyTavern 1.12 data folder's layout)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from cli_process import command
from indexer.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "imports" / "sillytavern"
GROUP_CHAT = "2024-7-12@01h31m37s"
GROUP = {"id": "1720747897123", "name": "林间小队", "members": ["Seraphina.png", "Flux the Cat.png"],
         "avatar_url": "img/five.png", "allow_self_responses": False, "activation_strategy": 0,
         "generation_mode": 0, "disabled_members": [], "chat_metadata": {}, "fav": False,
         "chat_id": GROUP_CHAT, "chats": [GROUP_CHAT, "2024-7-13@09h00m00s"], "auto_mode_delay": 5}
# as SillyTavern 1.12 saves a group chat: no header line, one message per line, each with its speaker
MESSAGES = [
    {"name": "Mira", "is_user": True, "is_system": False, "send_date": "2024-7-12@01h31m40s",
     "mes": "Where do we camp tonight?"},
    {"name": "Seraphina", "is_user": False, "is_system": False, "send_date": "2024-7-12@01h32m05s",
     "mes": "By the silver spring; its water heals.", "original_avatar": "Seraphina.png"},
    {"name": "Mira", "is_user": True, "is_system": True, "send_date": "2024-7-12@01h33m00s",
     "mes": "(hidden) ignore the wolves, they are a decoy"},
    {"name": "Flux the Cat", "is_user": False, "is_system": False, "send_date": "2024-7-12@01h34m10s",
     "mes": "我会守夜，因为猫在夜里看得见。", "original_avatar": "Flux the Cat.png"},
]
# a later SillyTavern writes a header whose character_name is "unused" in a group chat
HEADED = [{"user_name": "unused", "character_name": "unused", "create_date": "2024-7-13@09h00m00s",
           "chat_metadata": {}},
          {"name": "Seraphina", "is_user": False, "send_date": "2024-7-13@09h01m00s", "mes": "The spring is warm."}]


pytestmark = pytest.mark.usefixtures("utc")  # mem0 and chat stamps become local dates: pin the zone


def jsonl(rows) -> str:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)  # SillyTavern ends without a newline


def png_without_card() -> bytes:
    """An avatar or expression sprite: a valid 1x1 PNG with no character data in it."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


@pytest.fixture
def data_folder(tmp_path) -> Path:
    """`data/default-user/` with a character chat, a group and its chats, a world, cards and the sprites beside them."""
    root = tmp_path / "default-user"
    shutil.copytree(FIXTURES / "chats", root / "chats")
    shutil.copytree(FIXTURES / "worlds", root / "worlds")
    shutil.copytree(FIXTURES / "characters", root / "characters")
    (root / "groups").mkdir()
    (root / "groups" / f"{GROUP['id']}.json").write_text(json.dumps(GROUP, ensure_ascii=False), encoding="utf-8")
    (root / "group chats").mkdir()
    (root / "group chats" / f"{GROUP_CHAT}.jsonl").write_text(jsonl(MESSAGES), encoding="utf-8")
    (root / "group chats" / "2024-7-13@09h00m00s.jsonl").write_text(jsonl(HEADED), encoding="utf-8")
    (root / "characters" / "Seraphina").mkdir()
    (root / "characters" / "Seraphina" / "joy.png").write_bytes(png_without_card())
    (root / "User Avatars").mkdir()
    (root / "User Avatars" / "user-default.png").write_bytes(png_without_card())
    (root / "settings.json").write_text('{"firstRun": false}', encoding="utf-8")
    (root / "backups").mkdir()  # SillyTavern's copy at every save: `chat_<chat id>_<time>.jsonl`
    (root / "backups" / f"chat_{GROUP_CHAT}_20240712-013410.jsonl").write_text(jsonl(MESSAGES), encoding="utf-8")
    return root


def test_a_group_chat_lands_under_the_groups_name_with_every_speaker_and_no_hidden_message(data_folder, make_memory):
    mem = make_memory()
    rep = mem.import_notes(data_folder)
    home = mem.cfg.home
    assert rep["hidden"] == 1 and rep["bad"] == [] and not (home / "spaces/unused").exists()
    assert rep["formats"]["sillytavern-chat"] == 3  # Seraphina's chat and the group's two; groups/*.json is none
    day = (home / "spaces/林间小队/journal/2024-07-12.md").read_text(encoding="utf-8")
    assert "- 01:31: **Mira:** Where do we camp tonight?" in day
    assert "- 01:32: **Seraphina:** By the silver spring" in day
    assert "- 01:34: **Flux the Cat:** 我会守夜" in day
    assert "wolves" not in day  # hidden in SillyTavern, so never a memory
    assert "The spring is warm." in (home / "spaces/林间小队/journal/2024-07-13.md").read_text(encoding="utf-8")
    block = mem.recall("谁守夜", space="林间小队")["text"]
    assert "Flux the Cat: 我会守夜，因为猫在夜里看得见。" in block
    block = mem.recall("where do we camp", space="林间小队")["text"]
    assert "Mira: Where do we camp tonight?" in block and "wolves" not in block


def test_sprites_avatars_and_settings_in_a_data_folder_are_skipped_not_errors(data_folder, make_memory):
    mem = make_memory(embedder=None)
    warnings = []
    mem._warn = warnings.append
    rep = mem.import_notes(data_folder)
    skipped = {Path(p).name for p in rep["skipped"]}
    assert any("settings.json" in w for w in warnings) and not any(".png" in w for w in warnings)
    assert {"joy.png", "user-default.png", "settings.json"} <= skipped
    assert not any("backups" in p for p in rep["skipped"] + rep["written"])  # copies of the chats, not read
    assert (mem.cfg.home / "spaces/Seraphina/lore/Seraphina-s-memories.md").exists()  # the card in the same folder
    assert (mem.cfg.home / "lore/Eldoria.md").exists()


def test_a_group_chat_without_its_group_file_asks_for_a_space(tmp_path, make_memory):
    alone = tmp_path / f"{GROUP_CHAT}.jsonl"
    alone.write_text(jsonl(MESSAGES), encoding="utf-8")
    mem = make_memory(embedder=None)
    with pytest.raises(InputError, match="pass --space NAME"):
        mem.import_notes(alone)
    assert mem.import_notes(alone, space="camp")["added"] == 3


def test_a_truncated_file_stops_the_import_unless_skip_bad_then_only_it_is_left_out(data_folder, make_memory):
    cut = data_folder / "chats" / "Seraphina" / "Seraphina - 2024-7-1@10h00m00s.jsonl"
    cut.write_text(jsonl([{"user_name": "Mira", "character_name": "Seraphina", "create_date": "2024-7-1@10h00m00s"},
                          {"name": "Mira", "is_user": True, "send_date": "2024-7-1@10h00m05s", "mes": "Hello"}])
                   + '\n{"name": "Seraphina", "is_user": false, "mes": "Wel', encoding="utf-8")  # cut mid-save
    mem = make_memory(embedder=None)
    with pytest.raises(InputError) as err:
        mem.import_notes(data_folder)
    assert f"{cut}:3: not valid JSON" in str(err.value) and "--skip-bad" in str(err.value)
    assert not list(mem.cfg.home.rglob("*.md"))  # nothing written
    rep = mem.import_notes(data_folder, skip_bad=True)
    assert [b.split(": not valid JSON")[0] for b in rep["bad"]] == [f"{cut}:3"]
    assert rep["added"] > 0 and (mem.cfg.home / "spaces/林间小队/journal/2024-07-12.md").exists()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TZ": "UTC"}
    cli = subprocess.run(command("--home", str(mem.cfg.home), "--embedder", "none",
                          "import", str(data_folder), "--skip-bad"), capture_output=True, text=True, env=env,
                         timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert f"not imported (damaged): {cut}:3: not valid JSON" in cli.stderr
    assert "1 hidden or system messages left out" in cli.stdout
