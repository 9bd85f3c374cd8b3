"""`mdmem serve` when a store root is deleted, replaced by a file or a link, and created again."""

import json
import os
import shutil
import signal
import stat

from daemon_harness import Served, eventually, found_not, write


def served_none(tmp_path) -> Served:
    d = Served(tmp_path)
    d.args += ["--embedder", "none"]  # this is about files and handles, not vectors
    return d


def log_count(d: Served, event: str) -> int:
    return sum(1 for line in d.log.read_text().splitlines() if f'"event": "{event}"' in line)


def missing(d: Served) -> str | None:
    return d.call("status")["project"]["missing"]


def test_deleted_project_root_answers_empty_then_is_followed_when_created_again(tmp_path):
    d = served_none(tmp_path)
    write(d.notes / "old.md", "# Old\n\noldroot marmalade\n")
    write(d.home / "user" / "g.md", "# Global\n\nglobal gooseberry\n")
    d.start()
    try:
        assert d.uris("marmalade") == {"old.md"}
        shutil.rmtree(d.notes)
        assert eventually(lambda: log_count(d, "store_root_missing") == 1)
        assert missing(d) == "deleted"
        assert d.uris("marmalade") == set()  # no hits and no error for the vanished store
        r = d.cli("search", "marmalade", "--mode", "fts", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["results"] == [], r.stderr
        assert d.uris("gooseberry") == {"user/g.md"}
        write(d.home / "user" / "g2.md", "# Global\n\nglobal greengage\n")  # the other store still indexes
        assert eventually(lambda: d.uris("greengage") == {"user/g2.md"})
        assert not d.notes.exists()  # searching never creates the deleted root again
        r = d.cli("status")
        assert r.returncode == 0 and "is missing (deleted)" in r.stdout, r.stderr

        write(d.notes / "new.md", "# New\n\nnewroot quince\n")
        assert eventually(lambda: d.uris("quince") == {"new.md"})
        # the reconcile commits (the note is found) before the writer logs that the root is back
        assert eventually(lambda: log_count(d, "store_root_restored") == 1)
        assert log_count(d, "store_root_missing") == 1
        assert missing(d) is None
        assert stat.S_IMODE((d.notes / "index.db").stat().st_mode) == 0o600
        assert (d.notes / "index.db.lock").read_text() == str(d.proc.pid)  # the lock is held in the new folder
        assert "already serves" in d.cli("serve").stderr
        write(d.notes / "new.md", "# New\n\nnewroot rhubarb\n")
        assert eventually(lambda: found_not(d, "rhubarb", "quince", "new.md"))
        write(d.notes / "later" / "l.md", "# Later\n\nlater loganberry\n")
        assert eventually(lambda: d.uris("loganberry") == {"later/l.md"})
        assert d.uris("marmalade") == set()
    finally:
        assert d.stop() == 0, d.log.read_text()
    assert "Traceback" not in d.log.read_text()
    r = d.cli("verify")
    assert r.returncode == 0, r.stdout + r.stderr


def test_root_replaced_by_a_file_then_by_a_link_to_another_folder(tmp_path):
    d = served_none(tmp_path)
    write(d.notes / "a.md", "# A\n\nfirst apricot\n")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "e.md", "# E\n\nlinked elderberry\n")
    d.start()
    try:
        assert d.uris("apricot") == {"a.md"}
        shutil.rmtree(d.notes)
        d.notes.write_text("not a folder")
        assert eventually(lambda: missing(d) in ("deleted", "not a folder any more"))
        assert d.uris("apricot") == set() and d.call("search", query="apricot") == []
        d.notes.unlink()
        os.symlink(elsewhere, d.notes)
        assert eventually(lambda: d.uris("elderberry") == {"e.md"})
        assert (elsewhere / "index.db").exists() and (elsewhere / "index.db.lock").exists()
        write(elsewhere / "e2.md", "# E2\n\nlinked fig\n")  # edits in the link's target are watched
        assert eventually(lambda: d.uris("fig") == {"e2.md"})
        (d.notes / "index.db").unlink()  # the index alone vanishes: a new one is made from the notes
        assert eventually(lambda: log_count(d, "store_index_replaced") == 1 and missing(d) is None)
        assert eventually(lambda: d.uris("elderberry") == {"e.md"} and d.uris("fig") == {"e2.md"})
        (d.notes / "index.db.lock").unlink()  # the lock file alone vanishes: taken again
        assert eventually(lambda: (elsewhere / "index.db.lock").exists())
        assert "already serves" in d.cli("serve").stderr
    finally:
        assert d.stop(signal.SIGINT) == 0, d.log.read_text()
    assert "Traceback" not in d.log.read_text()
    r = d.cli("verify")
    assert r.returncode == 0, r.stdout + r.stderr
