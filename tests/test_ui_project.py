"""The memory browser on a project store: edit, forget, undo and history of a project's memory over a real daemon."""

from __future__ import annotations

import pytest

from http_daemon import serving
from polling import eventually

NOTE = "---\ntype: decision\n---\n\n# Decisions\n\n- 2026-01-05: The build uses ninja, not make\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("ui_project")
    project = base / "proj"
    (project / ".mdmem" / "agent").mkdir(parents=True)
    (project / ".mdmem" / "agent" / "decisions.md").write_text(NOTE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MDMEM_PROJECT", str(project))  # the daemon serves this project's store beside the global one
        with serving(base) as srv:
            srv.note = project / ".mdmem" / "agent" / "decisions.md"
            yield srv


def listed(srv) -> list[dict]:
    status, got = srv.call("POST", "/v1/ui/memories", {"store": "project"})
    assert status == 200, got
    return got["results"]


def test_the_page_is_told_of_the_project_store(server):
    status, got = server.call("GET", "/v1/ui/status")
    assert status == 200 and list(got["stores"]) == ["global", "project"]
    assert eventually(lambda: server.call("GET", "/v1/ui/status")[1]["stores"]["project"]["chunks"] > 0, timeout=60)


def test_a_project_memory_is_edited_forgotten_put_back_and_its_history_shown(server):
    assert eventually(lambda: any("ninja" in m["text"] for m in listed(server)), timeout=60)
    rid = next(m["id"] for m in listed(server) if "ninja" in m["text"])
    assert server.call("GET", f"/v1/memories/{rid}/")[0] == 404  # mem0's routes are the global store's
    status, got = server.call("GET", f"/v1/ui/memories/{rid}/")
    assert status == 200 and "ninja" in got["memory"]

    status, got = server.call("PUT", f"/v1/ui/memories/{rid}/", {"text": "The build uses meson now"})
    assert status == 200, got
    assert "meson" in server.note.read_text() and "ninja" not in server.note.read_text()
    assert not list(server.home.rglob("decisions.md"))  # nothing of it landed in the global store
    assert eventually(lambda: any("meson" in m["text"] for m in listed(server)), timeout=30)

    status, events = server.call("GET", f"/v1/ui/memories/{rid}/history/")
    assert status == 200, events
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in events][-1] == (
        "UPDATE", "The build uses ninja, not make", "The build uses meson now")

    current = got["current_id"]
    status, got = server.call("DELETE", f"/v1/ui/memories/{current}/")
    assert status == 200, got
    assert "meson" not in server.note.read_text()
    assert eventually(lambda: not any("meson" in m["text"] for m in listed(server)), timeout=30)
    status, got = server.call("POST", f"/v1/ui/memories/{current}/restore/", {})
    assert status == 200, got
    assert "meson" in server.note.read_text()
    assert eventually(lambda: any("meson" in m["text"] for m in listed(server)), timeout=30)
    assert server.call("GET", "/v1/ui/memories/0123456789abcdef/")[0] == 404
