"""The watcher on real files: debounce, which paths count, and the polling fallback."""

import errno
import logging
import shutil
import threading

import pytest

from indexer.notes.scanner import NoteFilter
from indexer.daemon.watcher import Debouncer, Watcher
from polling import eventually as wait_for

pytestmark = pytest.mark.unit


class Collector:
    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()

    def __call__(self, name, paths):
        with self.lock:
            self.calls.append((name, list(paths)))

    def paths(self):
        with self.lock:
            return {p for _n, ps in self.calls for p in ps}


def test_debouncer_coalesces_a_burst_into_one_flush():
    now = [0.0]
    got = Collector()
    d = Debouncer(0.2, got, clock=lambda: now[0], start=False)
    for _ in range(20):  # an editor's save: the same note touched every 10 ms
        d.hit("global", "/r/a.md")
        now[0] += 0.01
    d.hit("global", "/r/b.md")
    assert d.flush_ripe() == 0 and d.pending() == 2  # a.md's last touch was 0.01 s ago
    now[0] += 0.19  # a.md quiet for 0.2 s, b.md not yet
    assert d.flush_ripe() == 1 and got.calls == [("global", ["/r/a.md"])]
    now[0] += 0.01
    assert d.flush_ripe() == 1 and got.calls[-1] == ("global", ["/r/b.md"])
    now[0] += 60
    assert d.flush_ripe() == 0 and d.pending() == 0
    assert sum(p == "/r/a.md" for _n, ps in got.calls for p in ps) == 1


def test_debouncer_thread_flushes_once_quiet():
    got = Collector()
    d = Debouncer(0.05, got)
    try:
        d.hit("global", "/r/a.md")
        d.hit("global", "/r/b.md")
        assert wait_for(lambda: got.paths() == {"/r/a.md", "/r/b.md"})
        assert d.pending() == 0
    finally:
        d.stop()


def _watch(tmp_path, factory=None):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    got = Collector()
    kwargs = {"observer_factory": factory} if factory else {}
    w = Watcher({"global": root}, {"global": NoteFilter(root)}, got, 0.1, **kwargs)
    w.start()
    return root, got, w


def test_notes_are_reported_and_editor_litter_is_not(tmp_path):
    root, got, w = _watch(tmp_path)
    try:
        (root / "sub").mkdir()
        (root / "sub" / "note.md").write_text("hello")
        for junk in (".note.md.swp", "4913", "note.md~", ".#note.md", "index.db-wal", "note.md.tmp", "x.txt"):
            (root / junk).write_text("junk")
        (root / ".hidden").mkdir()
        (root / ".hidden" / "secret.md").write_text("no")
        (root / "last.md").write_text("after the litter")
        # events arrive in order and are flushed in order, by one thread: litter let through would be here by now
        assert wait_for(lambda: {str(root / "sub" / "note.md"), str(root / "last.md")} <= got.paths())
        names = {p.rsplit("/", 1)[-1] for p in got.paths()}
        assert names <= {"note.md", "sub", "last.md"}, names
    finally:
        w.stop()


def test_moves_report_both_ends_and_folders(tmp_path):
    root, got, w = _watch(tmp_path)
    try:
        (root / "a.md").write_text("a")
        assert wait_for(lambda: str(root / "a.md") in got.paths())
        (root / "a.md").rename(root / "b.md")
        assert wait_for(lambda: str(root / "b.md") in got.paths())
        outside = tmp_path / "outside"
        (outside / "deep").mkdir(parents=True)
        (outside / "deep" / "c.md").write_text("c")
        outside.rename(root / "moved_in")
        assert wait_for(lambda: str(root / "moved_in") in got.paths())
    finally:
        w.stop()


def test_out_of_inotify_watches_falls_back_to_polling_once(tmp_path, capsys):
    def no_watches():
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    root, got, w = _watch(tmp_path, factory=no_watches)
    try:
        assert w.polling
        (root / "p.md").write_text("polled")
        assert wait_for(lambda: str(root / "p.md") in got.paths())
        w.check()  # polling never falls back again
        assert w.polling
    finally:
        w.stop()
    assert capsys.readouterr().out.count("watch_fallback_polling") == 1


def test_deleted_root_is_reported_not_mistaken_for_a_dead_observer_and_rewatched(tmp_path, capsys):
    gone = []
    root, got, w = _watch(tmp_path)
    w.on_root_event = gone.append
    try:
        (root / "a.md").write_text("a")
        assert wait_for(lambda: str(root / "a.md") in got.paths())
        shutil.rmtree(root)
        assert wait_for(lambda: gone == ["global"])
        w.check()  # the root's emitter stopped with its folder: no fallback to polling
        assert not w.polling
        root.mkdir()
        w.rewatch("global")
        (root / "b.md").write_text("b")
        assert wait_for(lambda: str(root / "b.md") in got.paths())
        w.check()
        assert not w.polling
    finally:
        w.stop()
    assert "watch_fallback_polling" not in capsys.readouterr().out


def test_lost_events_reconcile_each_root_once_after_the_burst(tmp_path, capsys):
    lost = []
    root, got, w = _watch(tmp_path)
    w.on_lost = lost.append
    try:
        for _ in range(3):  # what watchdog logs when the kernel's inotify queue overflows
            logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
        (root / "c.md").write_text("c")
        assert wait_for(lambda: lost == ["global"] and str(root / "c.md") in got.paths())
        (root / "d.md").write_text("d")  # flushed after every earlier hit: a second reconcile would be asked by now
        assert wait_for(lambda: str(root / "d.md") in got.paths())
        assert lost == ["global"] and "" not in got.paths()
    finally:
        w.stop()
    assert capsys.readouterr().out.count("watch_overflow") == 1
