"""Every job handed to a store's writer gets exactly one answer, whatever the writer folds, and no wait is endless."""

from __future__ import annotations

import threading

import pytest

from indexer import config
from indexer.daemon.jobs import Job, Reply
from indexer.daemon.store_writer import StoreWriter
from indexer.embedder import load_embedder
from indexer.errors import WriterBusyError

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
