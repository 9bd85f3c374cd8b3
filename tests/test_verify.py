"""`mdmem verify`: every kind of drift between index and notes is found, and --repair fixes only that."""

import json
import os
import subprocess

import pytest

from cli_process import command
from indexer.index import sql

NOTES = {
    "user/prefs.md": "# Preferences\n\nI take my coffee black, no sugar, every single morning.\n\n"
                     "## Tools\n\nNeovim with a light theme; tabs are four spaces wide in every project.\n",
    "journal/2026-01-02.md": "# Incident\n\n数据库迁移失败，根本原因是锁等待超时。回滚花了二十分钟。\n",
}
PROJECT = {"agent/decisions.md": "# Decision\n\nUse SQLite WAL mode with a busy timeout for every writer process.\n"}


def _con(mem, name="global"):
    return next(s for s in mem.stores() if s.name == name).con


def _kinds(mem):
    return sorted(d.kind for r in mem.verify() for d in r.differences)


def test_fresh_index_is_consistent(make_memory):
    mem = make_memory(NOTES, PROJECT)
    reports = mem.verify()
    assert [r.ok for r in reports] == [True, True]
    assert reports[0].files == 2 and reports[0].chunks > 0


@pytest.mark.parametrize("tamper,kind", [
    ("DELETE FROM chunks WHERE rowid = (SELECT min(rowid) FROM chunks)", "chunks"),
    ("UPDATE chunks SET content = 'tampered text' WHERE rowid = (SELECT min(rowid) FROM chunks)", "chunks"),
    ("UPDATE chunks SET start_line = start_line + 1 WHERE rowid = (SELECT min(rowid) FROM chunks)", "chunks"),
    ("DELETE FROM chunks_vec WHERE id = (SELECT id FROM chunks LIMIT 1)", "missing-vectors"),
    ("INSERT INTO chunks_vec(id, embedding) SELECT 'ghost', embedding FROM chunks_vec LIMIT 1", "orphan-vectors"),
    ("INSERT INTO chunks_fts(rowid, content, uri, section) VALUES(9999, 'ghost words', 'x.md', '')", "fts"),
    ("INSERT INTO chunks_fts(chunks_fts, rowid, content, uri, section) SELECT 'delete', fts_rowid, content, uri,"
     " section FROM chunks LIMIT 1", "fts"),
    ("DELETE FROM documents WHERE uri = 'user/prefs.md'", "unindexed"),
    ("UPDATE documents SET sha256 = 'x' WHERE uri = 'user/prefs.md'", "changed"),
    ("INSERT INTO documents(uri, size, mtime_ns, sha256, indexed_at) VALUES('gone.md', 1, 1, 'x', 0)", "vanished"),
    ("UPDATE meta SET value = '7' WHERE key = 'dimension'", "dimension"),
])
def test_each_drift_is_found_and_repaired(make_memory, tamper, kind):
    mem = make_memory(NOTES, PROJECT)
    con = _con(mem)
    con.execute(tamper)
    found = mem.verify()
    assert kind in [d.kind for d in found[0].differences]
    assert found[1].ok  # the other store is untouched
    repaired = mem.verify(repair=True)
    assert all(r.ok for r in repaired), [d for r in repaired for d in r.differences]
    assert repaired[0].repaired and repaired[0].found >= 1
    assert mem.search("coffee sugar", mode="fts")[0].uri == "user/prefs.md"


def test_repair_keeps_counters_of_untouched_text(make_memory):
    mem = make_memory(NOTES, PROJECT)
    hit = mem.search("coffee black sugar", mode="fts")[0]
    con = _con(mem)
    con.execute("DELETE FROM documents WHERE uri = 'user/prefs.md'")
    mem.verify(repair=True)
    row = sql.chunks_by_ids(con, [hit.id])[0]
    assert row["access_count"] == 1


def test_edited_and_new_notes_show_until_indexed(make_memory, tmp_path):
    mem = make_memory(NOTES, PROJECT)
    (tmp_path / "home" / "user" / "prefs.md").write_text("# Preferences\n\nTea now, green, no milk at all please.\n")
    (tmp_path / "home" / "new.md").write_text("# New\n\nA new note nobody indexed yet at all.\n")
    (tmp_path / "home" / "journal" / "2026-01-02.md").unlink()
    assert _kinds(mem) == ["changed", "unindexed", "vanished"]
    mem.index()
    assert _kinds(mem) == []


def test_text_only_session_does_not_demand_vectors(make_memory, none_embedder, tmp_path):
    make_memory(NOTES, PROJECT)
    mem = make_memory(embedder=none_embedder, index=False)
    (tmp_path / "home" / "more.md").write_text("# More\n\nWritten while no model was loaded at all.\n")
    mem.index()
    assert all(r.ok for r in mem.verify())


def test_damaged_file_is_rebuilt_by_repair(make_memory, tmp_path):
    mem = make_memory(NOTES, PROJECT)
    mem.close()
    path = tmp_path / "home" / "index.db"
    data = bytearray(path.read_bytes())
    for off in range(4096 * 2, min(len(data), 4096 * 6), 97):  # scribble over b-tree pages, keep the header
        data[off] = (data[off] + 13) % 256
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        (tmp_path / "home" / f"index.db{suffix}").unlink(missing_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(tmp_path / "home"), "--project", str(tmp_path / "proj"))
    r = subprocess.run(base + ["verify"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1 and "integrity" in r.stdout + r.stderr, r.stdout + r.stderr  # the damage is detected
    r = subprocess.run(base + ["verify", "--repair"], capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in r.stderr
    r = subprocess.run(base + ["verify"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    aside = list((tmp_path / "home").glob("index.db.corrupt-*"))  # kept aside as docs/RELIABILITY.md says
    assert len(aside) == 1 and aside[0].read_bytes() == bytes(data)


def test_cli_exit_codes_and_json(make_memory, tmp_path):
    mem = make_memory(NOTES, PROJECT)
    _con(mem).execute("DELETE FROM chunks_vec WHERE id = (SELECT id FROM chunks LIMIT 1)")
    mem.close()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(tmp_path / "home"), "--project", str(tmp_path / "proj"))
    r = subprocess.run(base + ["verify", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    first = json.loads(r.stdout)["stores"]["global"]
    assert json.loads(r.stdout)["ok"] is False and first["store"] == "global" and not first["ok"] and first["differences"][0]["kind"] == "missing-vectors"
    r = subprocess.run(base + ["verify", "--repair"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "repair: embedded 1 missing vector" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(base + ["verify"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "consistent" in r.stdout


def test_index_files_are_private(make_memory, tmp_path):
    mem = make_memory(NOTES, PROJECT)
    mem.search("coffee")
    for name in ("index.db", "index.db-wal", "index.db-shm"):
        path = tmp_path / "home" / name
        if path.exists():
            assert oct(path.stat().st_mode & 0o777) == "0o600", name
