"""SIGTERM indexes the saves the debounce still holds, then the daemon exits 0."""

import json
import signal

import polling
from indexer.index import db
from indexer.index import sql
from daemon_harness import Served


def indexed_uris(root) -> set[str]:
    con = db.connect(root / "index.db", readonly=True)
    try:
        return set(sql.all_documents(con))
    finally:
        con.close()


def test_a_note_saved_just_before_sigterm_is_indexed_before_exit(tmp_path):
    d = Served(tmp_path)
    d.args += ["--embedder", "none"]
    d.env["MDMEM_DEBOUNCE_MS"] = "60000"  # a long quiet time: without the last flush this save waits a start
    d.start()
    (d.notes / "late.md").write_text("# Late\n\nSaved a moment before the daemon was stopped.\n", encoding="utf-8")
    assert polling.eventually(lambda: d.call("status")["project"]["pending"] >= 1, 30)
    assert "late.md" not in indexed_uris(d.notes)  # still held by the debounce
    assert d.stop(signal.SIGTERM) == 0
    assert "late.md" in indexed_uris(d.notes)
    events = [json.loads(ln) for ln in d.log.read_text().splitlines() if ln.startswith("{")]
    held = [e for e in events if e.get("event") == "held_saves_indexed"]
    assert held and held[0]["paths"] >= 1 and held[0]["unfinished_jobs"] == 0
