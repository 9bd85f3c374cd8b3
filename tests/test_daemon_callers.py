"""The daemon serves whoever uses its global store: commands in any project use it, and a flag it cannot honour
is refused in one line, never ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon_harness import Served
from polling import eventually


def served(base: Path) -> Served:
    """A daemon's home with one note, serving the global store alone (a project is found from where commands run)."""
    d = Served(base, project=False)
    (d.home / "user" / "tea.md").write_text("# Tea\n\nThe user brews oolong tea every morning.\n")
    return d


def status(d: Served, cwd: Path) -> dict:
    r = d.cli("status", "--json", cwd=cwd)
    return json.loads(r.stdout)["stores"] if r.returncode == 0 else {}


@pytest.fixture
def home(tmp_path):
    d = served(tmp_path)
    yield d
    assert d.stop() in (0, None), d.log.read_text()


def test_a_command_in_another_project_uses_the_daemon_of_its_global_store(home):
    home.start("--embedder", "none", cwd=home.base)  # started for the global store alone
    project = home.base / "work" / "app"
    (project / ".mdmem" / "journal").mkdir(parents=True)
    (project / ".mdmem" / "journal" / "plan.md").write_text("# Plan\n\nWe migrate the billing tables on Friday.\n")
    found_status = status(home, cwd=project)
    assert found_status["global"]["daemon"] is True and found_status["project"]["daemon"] is True
    assert found_status["project"]["pid"] == home.proc.pid and found_status["project"]["root"] == str(project / ".mdmem")
    added = home.cli("add", "The staging database lives on port 5433", "--scope", "project", "--json", cwd=project)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["indexed"] is True
    assert not (project / ".mdmem" / "index.db").exists() or found_status["project"]["daemon"]
    found = json.loads(home.cli("search", "billing tables", "--mode", "fts", "--json", cwd=project).stdout)
    assert [h["store"] for h in found["results"]][:1] == ["project"]
    # the daemon took the project on: an editor's save there is indexed without any command
    (project / ".mdmem" / "journal" / "later.md").write_text("# Later\n\nThe walrus mascot ships in the release.\n")
    assert eventually(lambda: json.loads(home.cli("search", "walrus mascot", "--mode", "fts", "--json",
                                                  cwd=project).stdout)["results"], timeout=30, every=0.3)
    # a command outside any project still sees only the global store
    outside = status(home, cwd=home.base)
    assert set(outside) == {"global"}


def test_a_flag_the_daemon_cannot_honour_is_refused_in_one_line(home):
    home.start("--embedder", "none", cwd=home.base)
    r = home.cli("--embedder", "usem3", "search", "oolong", cwd=home.base)
    assert r.returncode == 2 and "--embedder usem3" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    same = home.cli("--embedder", "none", "search", "oolong", "--mode", "fts", cwd=home.base)
    assert same.returncode == 0 and "oolong" in same.stdout


def test_init_takes_the_project_after_the_command_as_the_readme_writes_it(tmp_path):
    h = served(tmp_path)
    r = h.cli("init", "--project", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / ".mdmem").is_dir() and "project store" in r.stdout
