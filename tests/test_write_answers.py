"""Every job handed to a store's writer gets exactly one answer, whatever the writer folds, and no wait is endless."""

from __future__ import annotations

import threading

import pytest

from indexer import config
from indexer.daemon.jobs import Job, Reply
from indexer.daemon.store_writer import StoreWriter
from indexer.embedder import load_embedder
from indexer.errors import WriterBusyError
from polling import eventually

pytestmark = pytest.mark.unit

DEADLINE_S = 20.0


@pytest.fixture
def writer(tmp_path):
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    cfg = config.load(home=home, env={}, embedder="none")
    stopping = threading.Event()
    w = StoreWriter("global", home, load_embedder(cfg), cfg, stopping)
    yield w, home
    stopping.set()
    if w.is_alive():
        w.join(10)


def test_path_jobs_folded_together_all_get_their_answer(writer):
    w, home = writer
    replies = []
    for i in range(6):  # queued before the thread starts: the first one folds the other five
        note = home / "user" / f"n{i}.md"
        note.write_text(f"# Note {i}\n\nThe heron number {i} waits by the river bank at dawn.\n")
        reply = Reply()
        w.submit(Job.PATHS, [str(note)], reply)
        replies.append(reply)
    w.start()
    w.ready.wait()
    for reply in replies:
        assert reply.wait(DEADLINE_S)["files"] >= 1


def test_access_jobs_folded_with_a_reply_are_answered(writer):
    w, _home = writer
    replies = [Reply() for _ in range(3)]
    for reply in replies:
        w.submit(Job.ACCESS, ["nope"], reply)
    w.start()
    w.ready.wait()
    for reply in replies:
        reply.wait(DEADLINE_S)


def test_a_wait_past_its_deadline_is_a_one_line_error_and_the_late_job_is_logged(writer, capsys):
    w, home = writer
    reply = Reply()
    w.submit(Job.RECONCILE, None, reply)  # the thread is not started: nobody consumes it yet
    with pytest.raises(WriterBusyError) as err:
        reply.wait(0.2)
    message = str(err.value)
    assert "\n" not in message and "retry" in message and err.value.retry_after >= 1
    w.start()
    w.ready.wait()
    w.call(Job.ROOT, timeout=DEADLINE_S)  # the late job ran before this one
    assert reply.done.is_set() and reply.error is None


def test_a_small_save_is_indexed_while_a_big_note_is_still_embedding(tmp_path):
    """The big note's embedding runs in slices; the small note queued behind it is answered between two."""
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    cfg = config.load(home=home, env={})
    emb = load_embedder(cfg)
    stopping = threading.Event()
    w = StoreWriter("global", home, emb, cfg, stopping)
    w.start()
    w.ready.wait()
    try:
        big = home / "user" / "big.md"
        big.write_text("".join(f"## Day {i}\n\nOn day {i} the caravan crossed dune number {i * 7} before noon.\n\n"
                               for i in range(1200)))
        small = home / "user" / "small.md"
        small.write_text("# Small\n\nThe kettle whistles when the tea water is ready.\n")
        big_reply, small_reply = Reply(), Reply()
        w.submit(Job.PATHS, [str(big)], big_reply)
        assert eventually(lambda: w.busy == "paths", timeout=10, every=0.005)
        w.submit(Job.PATHS, [str(small)], small_reply)
        assert small_reply.wait(120)["changed"] == 1
        assert not big_reply.done.is_set(), "the small note waited for the whole big note"
        assert big_reply.wait(300)["changed"] == 1
    finally:
        stopping.set()
        w.join(30)
