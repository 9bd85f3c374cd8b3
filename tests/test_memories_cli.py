"""`mdmem get`, `update`, `forget` and `--space` from the command line, in-process and through the daemon."""

import json

import pytest

from daemon_harness import Served


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = Served(tmp_path_factory.mktemp("memories"))
    (d.home / "user" / "preference.md").write_text(
        "# Preferences\n\n## Drinks\n\n- 2025-01-05: I prefer my coffee black, without sugar or milk.\n", encoding="utf-8")
    yield d
    assert d.stop() in (0, None), d.log.read_text()


def _json(r):
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _flow(d: Served):
    """Add in a space, find it only there, read it back, correct it, forget it; one-line refusals."""
    added = _json(d.cli("add", "Miso the grey cat sleeps on the piano", "--type", "fact", "--space", "alice", "--json"))
    assert added["uri"] == "spaces/alice/user/fact.md"
    assert _json(d.cli("search", "Miso piano", "--mode", "fts", "--json"))["results"] == []
    hit = _json(d.cli("search", "grey cat piano", "--space", "alice", "--json"))["results"][0]
    got = _json(d.cli("get", hit["id"], "--space", "alice", "--json"))
    assert got["text"].endswith("Miso the grey cat sleeps on the piano") and got["space"] == "alice"
    shown = d.cli("get", hit["id"], "--space", "alice")
    assert shown.returncode == 0 and shown.stdout.strip().endswith("sleeps on the piano") and hit["id"] in shown.stderr
    refused = d.cli("update", hit["id"], "Miso sleeps on the sofa now")  # wrong space: not found
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "no memory with id" in refused.stderr
    stale = d.cli("update", hit["id"], "Miso sleeps on the sofa now", "--space", "alice", "--expect-hash", "f" * 64)
    assert stale.returncode != 0 and "changed since it was read" in stale.stderr
    done = _json(d.cli("update", hit["id"], "Miso sleeps on the sofa now", "--space", "alice", "--json"))
    assert "sofa" in (d.home / added["uri"]).read_text(encoding="utf-8")
    listed = d.cli("forget", "--match", "Miso sofa", "--space", "alice")
    assert listed.returncode == 0 and done["id"] in listed.stdout and "--yes" in listed.stderr
    assert "sofa" in (d.home / added["uri"]).read_text(encoding="utf-8")
    forgot = d.cli("forget", done["id"], "--space", "alice")
    assert forgot.returncode == 0 and "forgot" in forgot.stdout
    assert "Miso" not in (d.home / added["uri"]).read_text(encoding="utf-8")
    again = d.cli("forget", done["id"], "--space", "alice")
    assert again.returncode == 2 and again.stderr.startswith("error: no memory with id")
    lines = d.cli("get", "user/preference.md:5")
    assert lines.stdout.strip() == "- 2025-01-05: I prefer my coffee black, without sugar or milk."


def test_memory_commands_in_process_then_through_the_daemon(served):
    _flow(served)
    served.start()
    assert served.call("get", ref="user/preference.md:5")["text"].startswith("- 2025-01-05")
    _flow(served)
