"""A newcomer's first commands: no store is created where the user did not mean one."""

import os

from cli_process import mdmem as run_mdmem

EMPTY_ENV = {k: v for k, v in os.environ.items() if k not in ("MDMEM_HOME", "MDMEM_PROJECT")}


def mdmem(*args, home_dir, cwd):
    return run_mdmem("--embedder", "none", *args, base_env=EMPTY_ENV, env={"HOME": str(home_dir)}, cwd=cwd,
                     timeout=120)


def test_a_missing_explicit_home_or_project_is_refused_with_the_fix(tmp_path):
    typo = tmp_path / "nonexistent" / "dir"
    r = mdmem("--home", str(typo), "search", "coffee", home_dir=tmp_path, cwd=tmp_path)
    assert r.returncode == 2 and "mdmem" in r.stderr and "init" in r.stderr and "--create" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert not (tmp_path / "nonexistent").exists()
    home = tmp_path / "h"
    home.mkdir()
    r = mdmem("--home", str(home), "--project", str(tmp_path / "proj"), "status", home_dir=tmp_path, cwd=tmp_path)
    assert r.returncode == 2 and "project" in r.stderr and "init" in r.stderr
    assert not (tmp_path / "proj").exists() and not (home / "index.db").exists()


def test_init_and_create_make_the_stores_asked_for(tmp_path):
    r = mdmem("--home", str(tmp_path / "h"), "--project", str(tmp_path / "p"), "init", home_dir=tmp_path,
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "h").is_dir() and (tmp_path / "p" / ".mdmem").is_dir()
    r = mdmem("--home", str(tmp_path / "h2"), "--create", "add", "I prefer tea", home_dir=tmp_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "h2" / "user").is_dir()


def test_the_default_home_is_created_once_with_a_notice_and_an_empty_store_says_so(tmp_path):
    r = mdmem("search", "coffee", home_dir=tmp_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "created the global store ~/.mdmem" in r.stderr
    assert "is empty" in r.stderr and "mdmem add" in r.stderr
    assert (tmp_path / ".mdmem").is_dir()
    r = mdmem("search", "coffee", home_dir=tmp_path, cwd=tmp_path)
    assert "created" not in r.stderr and "is empty" in r.stderr
    (tmp_path / ".mdmem" / "note.md").write_text("# Coffee\n\nI take my coffee black.\n", encoding="utf-8")
    r = mdmem("search", "coffee", home_dir=tmp_path, cwd=tmp_path)
    assert "mdmem index" in r.stderr
    r = mdmem("index", home_dir=tmp_path, cwd=tmp_path)
    r = mdmem("search", "coffee", home_dir=tmp_path, cwd=tmp_path)
    assert "note.md" in r.stdout and "empty" not in r.stderr
