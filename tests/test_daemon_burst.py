"""10,000 notes created at once under the running daemon, then a burst larger than the kernel's event queue."""

import json
import shutil
import signal
from pathlib import Path

import pytest

from bench_scripts import bench_module
from daemon_harness import Served, eventually, index_equals_notes

daemon_bench = bench_module("daemon_bench")

NOTES = 10_000
MAX_QUEUED = Path("/proc/sys/fs/inotify/max_queued_events")


def indexed(d: Served, files: int) -> bool:
    return daemon_bench.indexed(d.call("status"), "global", files)


@pytest.mark.slow
def test_10k_notes_at_once_then_an_overflowing_burst_are_all_indexed(tmp_path):
    d = Served(tmp_path)
    d.args += ["--embedder", "none"]  # about events, not the model
    d.start()
    burst = d.home / "burst"
    try:
        daemon_bench.write_burst(burst, NOTES)
        assert eventually(lambda: indexed(d, NOTES), 600), d.call("status")
        assert {h["uri"] for h in d.call("search", query=f"tokenburst{NOTES - 1}", limit=3)} == {
            f"burst/d99/burst{NOTES - 1:05}.md"}

        # while the daemon is stopped the kernel queues the events until it drops them
        # (IN_Q_OVERFLOW); ~3 events per new note, so this many notes overflow the queue
        queue = int(MAX_QUEUED.read_text()) if MAX_QUEUED.exists() else 16384
        extra = min(queue // 3 + 1000, 20_000)
        d.proc.send_signal(signal.SIGSTOP)
        try:
            daemon_bench.write_burst(burst, extra, start=NOTES, tag="frozen")  # into folders already watched
            shutil.rmtree(burst / "d00")
        finally:
            d.proc.send_signal(signal.SIGCONT)
        total = sum(1 for i in range(NOTES + extra) if i % 100)  # all but those in d00
        assert eventually(lambda: indexed(d, total), 600), d.call("status")
        if 3 * extra > queue:
            assert '"watch_overflow"' in d.log.read_text()
        assert index_equals_notes(d.home)
        r = d.cli("status", "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["stores"]["global"]["files"] == total, r.stderr
        assert d.proc.poll() is None
    finally:
        assert d.stop() == 0, d.log.read_text()[-3000:]
    assert "Traceback" not in d.log.read_text()
    r = d.cli("verify")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr


def test_a_folder_moved_in_is_indexed_in_groups_and_one_bad_note_does_not_stop_the_rest(tmp_path):
    d = Served(tmp_path)
    d.start()
    outside = tmp_path / "incoming"
    outside.mkdir()
    for i in range(40):
        (outside / f"n{i:02}.md").write_text(f"# Note {i}\n\nGroupword{i} is what note {i} is about.\n",
                                             encoding="utf-8")
    (outside / "broken.md").write_bytes(b"\x00\x01\x02binary\xff\xfe" * 100)
    try:
        (outside).rename(d.home / "incoming")  # one event for the folder: one burst of 41 files
        assert eventually(lambda: indexed(d, 40), 120), d.call("status")
        assert {h["uri"] for h in d.call("search", query="Groupword39", mode="fts", limit=3)} == {"incoming/n39.md"}
        events = [json.loads(ln) for ln in d.log.read_text().splitlines() if ln.startswith("{")]
        groups = [e for e in events if e.get("event") == "files_indexed"]
        assert groups and sum(e["indexed"] for e in groups) == 40, groups
        assert max(e["files"] for e in groups) > 1 and max(e["embedded"] for e in groups) > 1
        assert any("broken.md" in json.dumps(e) for e in events if e.get("level") == "warning"), events[-5:]
        assert d.proc.poll() is None
    finally:
        assert d.stop() == 0, d.log.read_text()[-3000:]
    assert "Traceback" not in d.log.read_text()
    assert d.cli("verify").returncode == 0
