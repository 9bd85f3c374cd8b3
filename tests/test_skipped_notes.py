"""One answer for "which notes were skipped and why": index, rebuild, verify and status agree, and a note that
cannot be indexed leaves the store skipped-but-current, not stale forever."""

from __future__ import annotations

import json
import os

from daemon_harness import Served
from indexer import config
from indexer.memory import Memory
from polling import eventually


def make_store(home):
    (home / "user").mkdir(parents=True, exist_ok=True)
    (home / "user" / "ok.md").write_text("# Ok\n\nThe walrus sleeps on the ice.\n")
    (home / "user" / "gbk.md").write_bytes("# 笔记\n\n咖啡不加糖。\n".encode("gbk"))
    (home / "user" / os.fsdecode(b"bad\xffname.md")).write_text("# Name\n\nA note whose name is not UTF-8.\n")


def test_index_rebuild_verify_and_status_count_the_same_skipped_notes(tmp_path):
    home = tmp_path / "h"
    make_store(home)
    with Memory(cfg=config.load(home=home, env={}, embedder="none")) as mem:
        first = mem.index()[0]
        again = mem.index()[0]  # nothing changed: the same notes are still skipped, and said so
        status = mem.status()["global"]
        verify = mem.verify()[0]
        rebuilt = mem.rebuild()[0]
        after = mem.status()["global"]
    counts = [len(first.skipped), len(again.skipped), status["skipped"], len(verify.skipped), len(rebuilt.skipped),
              after["skipped"]]
    assert counts == [2] * 6
    assert any("gbk.md: not UTF-8 text" in s for s in first.skipped)
    assert status["pending"] == 0 and not status["stale"] and verify.ok and not after["stale"]


def test_a_fixed_note_is_pending_then_indexed(tmp_path):
    home = tmp_path / "h"
    make_store(home)
    with Memory(cfg=config.load(home=home, env={}, embedder="none")) as mem:
        mem.index()
        (home / "user" / "gbk.md").write_text("# 笔记\n\n咖啡不加糖。\n", encoding="utf-8")
        assert mem.status()["global"]["pending"] == 1
        rep = mem.index()[0]
        assert rep.indexed == 1 and len(rep.skipped) == 1
        assert mem.status()["global"] == {**mem.status()["global"], "skipped": 1, "pending": 0, "stale": False}


def test_the_daemon_reports_skipped_notes_and_is_not_stale(tmp_path):
    d = Served(tmp_path, project=False, args=("--embedder", "none"))
    make_store(d.home)

    def status() -> dict:
        r = d.cli("status", "--json")
        return json.loads(r.stdout)["stores"]["global"] if r.returncode == 0 else {}
    d.start()
    try:
        assert eventually(lambda: status().get("daemon") and status().get("last_sync") and not status()["stale"],
                          timeout=120, every=0.3)
        assert status()["skipped"] == 2
    finally:
        assert d.stop() == 0, d.log.read_text()
