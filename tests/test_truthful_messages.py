"""Messages that tell the truth: each misleading case answers in one line that says how to fix it, with the right
exit code (usage errors 2), run as a user runs mdmem, with and without a daemon."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

from cli_process import mdmem
from http_daemon import serving
from polling import eventually


def one_line(done: subprocess.CompletedProcess, code: int = 2) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip()


def test_recall_of_nothing_is_an_error_not_silence(tmp_path):
    home = tmp_path / "home"
    assert mdmem("--home", str(home), "init").returncode == 0
    for empty in ("", "   "):
        done = mdmem("--home", str(home), "recall", empty)
        line = one_line(done)
        assert done.stdout == "" and "empty" in line and 'mdmem recall "' in line, line


def test_a_question_starting_with_dashes_says_to_put_double_dash_before_it_and_never_echoes_it_whole(tmp_path):
    home = tmp_path / "home"
    assert mdmem("--home", str(home), "init").returncode == 0
    assert mdmem("--home", str(home), "add", "---x marks the treasure on the old map.").returncode != 0  # an option
    assert mdmem("--home", str(home), "add", "--", "---x marks the treasure on the old map.").returncode == 0
    long = "---" + "我昨天去了哪里" * 1500  # 10 KB
    for command in ("search", "recall"):
        line = one_line(mdmem("--home", str(home), command, long))
        assert len(line) < 200, len(line)
        suggested = re.search(r"e\.g\. (mdmem \S+ -- .+)$", line)
        assert suggested and "read as an option" in line, line
    assert "Did you mean '--limit'" in mdmem("--home", str(home), "search", "--limt", "3", "x").stderr  # a typo
    found = mdmem("--home", str(home), "search", "--json", "--", "---x marks the treasure")
    assert found.returncode == 0, found.stderr
    assert "treasure" in json.loads(found.stdout)["results"][0]["content"]
    pasted = "y" * 10_000  # a 10 KB value where an option wants a short one: refused, never echoed whole
    for args in (["search", "--limit", "9" * 10_000, "x"], ["search", "x", "--since", pasted],
                 ["search", "x", "--now", pasted], ["search", "x", "--scope", pasted], ["search", "x", "--space", pasted],
                 ["get", pasted], ["add", "--file", pasted, "hello"], ["add", "--type", pasted, "hello"]):
        done = mdmem("--home", str(home), *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args[:2], done.stderr[-300:])
        assert len(done.stderr) < 600 and "y" * 81 not in done.stderr, (args[:2], done.stderr[:300])


def test_importance_out_of_range_is_said_in_front_matter_and_refused_on_add(tmp_path):
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    (home / "user" / "garden.md").write_text("---\nimportance: 99\n---\n# Garden\n\nThe garden gate is painted "
                                             "blue and creaks loudly.\n", encoding="utf-8")
    done = mdmem("--home", str(home), "index")
    assert done.returncode == 0, done.stderr
    assert "user/garden.md" in done.stderr and "importance 99 is outside 1-5; read as 5" in done.stderr
    hits = json.loads(mdmem("--home", str(home), "search", "garden gate", "--json").stdout)["results"]
    assert hits[0]["uri"] == "user/garden.md" and hits[0]["importance"] == 5
    before = sorted(p.name for p in home.rglob("*.md"))
    line = one_line(mdmem("--home", str(home), "add", "--importance", "99", "The shed key hangs by the door."))
    assert "--importance" in line and "1 to 5" in line
    assert sorted(p.name for p in home.rglob("*.md")) == before


def test_get_of_a_forgotten_id_says_it_was_forgotten_or_where_it_looked(tmp_path):
    home = tmp_path / "home"
    added = mdmem("--home", str(home), "--create", "add", "The blue bicycle is in the shed.")
    mid = added.stdout.split(" id ")[-1].strip()
    assert mdmem("--home", str(home), "forget", mid).returncode == 0
    line = one_line(mdmem("--home", str(home), "get", mid))  # the trash knows it
    assert line.startswith(f"error: no memory with id {mid}: it was forgotten (") and "edited" not in line, line
    assert f"`mdmem restore {mid}`" in line, line
    added = mdmem("--home", str(home), "add", "The red kite is in the attic.")
    mid = added.stdout.split(" id ")[-1].strip()
    assert mdmem("--home", str(home), "forget", "--purge", mid).returncode == 0
    line = one_line(mdmem("--home", str(home), "get", mid))  # purged: nothing knows it any more
    assert f"no memory with id {mid} in the global store {home}" in line, line
    assert "edited" in line and "forgotten" in line and "restore" not in line, line


def test_daemon_refusals_and_log_events_tell_the_truth(tmp_path):
    with serving(tmp_path) as srv:
        home, env = srv.home, srv.env
        # an id a client deleted: the history says it was forgotten, and get says so
        status, added = srv.call("POST", "/memories", {"messages": [{"role": "user",
                                                                     "content": "I keep the spare key under the blue pot."}],
                                                       "user_id": "alice"})
        mid = added["results"][0]["id"]
        assert status == 200 and srv.call("DELETE", f"/memories/{mid}")[0] == 200
        line = one_line(mdmem("--home", str(home), "get", mid, env=env))
        assert line.startswith(f"error: no memory with id {mid}: it was forgotten (") and "global store" in line, line
        for entry in (home / ".trash").glob("*.json"):
            entry.unlink()  # the trash entry expired: mem0's history still tells
        line = one_line(mdmem("--home", str(home), "get", mid, env=env))
        assert line.startswith(f"error: no memory with id {mid}: it was forgotten (deleted 20"), line
        # a project store that does not exist: exit 2, and the command it suggests works
        missing = tmp_path / "nowhere" / "proj"
        line = one_line(mdmem("--home", str(home), "--project", str(missing), "search", "x", env=env))
        fix = re.search(r"`(mdmem [^`]+)`", line).group(1)
        assert fix == f"mdmem --project {missing} init", line
        made = mdmem("--home", str(home), *shlex.split(fix)[1:], env=env)
        assert made.returncode == 0, made.stderr
        assert mdmem("--home", str(home), "--project", str(missing), "search", "x", env=env).returncode == 0
        # a second serve: this daemon was not started by systemd, so no systemctl
        second = mdmem("--home", str(home), "serve", env=env)
        line = one_line(second, code=1)
        assert f"`kill {srv.proc.pid}`" in line and "systemctl" not in line, line
        # a note whose front matter is broken is indexed without it: its own event, not note_skipped
        (home / "kettle.md").write_text("---\ntype: [oops\n---\n# Kettle\n\nThe kettle whistles at dawn.\n",
                                        encoding="utf-8")
        log = tmp_path / "serve.log"

        def events() -> list[dict]:
            return [json.loads(ln) for ln in log.read_text(errors="replace").splitlines() if ln.startswith("{")]

        assert eventually(lambda: any(e.get("event") == "front_matter_ignored" for e in events()), timeout=60)
        told = [e for e in events() if e.get("event") == "front_matter_ignored"][0]
        assert "kettle.md" in told["reason"] and "not valid YAML" in told["reason"]
        assert not any(e.get("event") == "note_skipped" for e in events())
        found = mdmem("--home", str(home), "search", "kettle whistles", "--json", env=env)
        assert json.loads(found.stdout)["results"][0]["uri"] == "kettle.md"


def test_a_second_serve_names_systemctl_only_for_a_daemon_systemd_started(tmp_path, monkeypatch):
    monkeypatch.setenv("INVOCATION_ID", "0123456789abcdef0123456789abcdef")  # what systemd sets for a service
    with serving(tmp_path) as srv:
        assert (srv.home / "index.db.lock").read_text().split() == [str(srv.proc.pid), "systemd"]
        monkeypatch.delenv("INVOCATION_ID")
        line = one_line(mdmem("--home", str(srv.home), "serve", env=srv.env), code=1)
        assert "`systemctl --user stop mdmem`" in line and "kill" not in line, line


HOLD = ("import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, str(os.getpid()).encode())\n"  # a lock as an older release wrote it: the pid alone
        "print('held', flush=True)\n"
        "time.sleep(300)\n")


def test_a_lock_that_does_not_say_how_its_daemon_started_is_read_from_the_holders_environment(tmp_path):
    home = tmp_path / "home"
    assert mdmem("--home", str(home), "init").returncode == 0
    for by_systemd in (True, False):
        env = {k: v for k, v in os.environ.items() if k != "INVOCATION_ID"}
        if by_systemd:
            env["INVOCATION_ID"] = "0123456789abcdef0123456789abcdef"
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(home / "index.db.lock")], env=env,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            line = one_line(mdmem("--home", str(home), "serve"), code=1)
            assert f"pid {holder.pid}" in line, line
            if by_systemd:
                assert "`systemctl --user stop mdmem`" in line and "kill" not in line, line
            else:
                assert f"`kill {holder.pid}`" in line and "systemctl" not in line, line
        finally:
            holder.kill()
            holder.wait()
