"""One writer per store: a daemon's readers never write, every write is a job of the store's writer thread."""

from __future__ import annotations

import inspect
import threading

import pytest

from indexer.daemon.jobs import Job
from indexer.index import db
from indexer.memory import Memory
from indexer.errors import ReadOnlyStoreError
from indexer.protocol import OPERATIONS, MemoryAPI
from indexer.remote import RemoteMemory

pytestmark = pytest.mark.unit


def access_count(home) -> int:
    con = db.connect(home / "index.db")
    try:
        return sum(r["access_count"] for r in db.rows(con, "SELECT access_count FROM chunks"))
    finally:
        con.close()


def test_a_reader_connection_never_writes(writer_daemon):
    daemon, writer, home = writer_daemon
    mem = daemon.reader()
    hits = mem.search("walrus", mode="fts")
    assert hits and hits[0].uri == "user/animals.md"
    mem.recall("where does the walrus sleep")
    mem.stats()
    added = mem.add("The harbour master feeds the gulls at dawn", type="fact")
    assert added["action"] == "appended" and added["indexed"]
    st = mem.stores("global")[0]
    assert st.con.readonly("main")  # opened read-only: SQLite itself refuses a write on it
    assert st.con.total_changes() == 0
    with pytest.raises(ReadOnlyStoreError, match="^read-only: "):  # one line naming the file
        st.con.execute("UPDATE chunks SET access_count = access_count + 1")
    writer.call(Job.ROOT)  # the access jobs queued before this one are done
    assert access_count(home) >= 2  # the search and the recall were counted, by the writer
    assert mem.search("gulls dawn", mode="fts")[0].uri == "user/fact.md"  # add was indexed by the writer


def test_access_counts_of_searches_close_together_are_one_commit(writer_daemon, monkeypatch):
    from indexer.daemon import store_writer
    monkeypatch.setattr(store_writer, "ACCESS_GATHER_S", 30.0)  # a slow machine still gathers all five
    daemon, writer, home = writer_daemon
    mem = daemon.reader()
    commits = []
    original = writer._do

    def spy(job, payload, reply):
        if job == Job.ACCESS:
            commits.append(list(payload))
        return original(job, payload, reply)

    writer._do = spy
    for _ in range(5):
        assert mem.search("walrus", mode="fts")[0].uri == "user/animals.md"
    writer.call(Job.ROOT)  # another job ends the gathering and runs after the counts
    assert len(commits) == 1 and len(commits[0]) == 5  # one commit, every search's hit in it
    assert access_count(home) == 5  # the same record returned five times counts five times


def test_store_wide_operations_are_writer_jobs(writer_daemon):
    daemon, writer, home = writer_daemon
    seen = []
    original = writer._do

    def spy(job, payload, reply):
        seen.append(job)
        return original(job, payload, reply)

    writer._do = spy
    mem = daemon.reader()
    mem.decay()
    mem.cleanup()
    assert mem.verify()[0].ok
    assert mem.index()[0].files == 1
    assert [j for j in seen if j != Job.ROOT] == [Job.DECAY, Job.CLEANUP, Job.VERIFY, Job.RECONCILE]
    assert mem.stores("global")[0].con.total_changes() == 0


def test_memory_and_the_socket_client_share_one_signature_per_operation():
    assert OPERATIONS
    for name in OPERATIONS:
        want = inspect.signature(getattr(MemoryAPI, name))
        assert inspect.signature(getattr(Memory, name)) == want, f"Memory.{name} drifted from the protocol"
        assert inspect.signature(getattr(RemoteMemory, name)) == want, f"RemoteMemory.{name} drifted"


def test_every_command_that_asks_the_memory_goes_through_the_daemon_when_one_runs():
    """The routing rule is said once (cli/backend.py): a command that asks the memory calls `backend`, never
    `c.memory()` itself; only the commands that open no index do neither."""
    from indexer.cli.main import cli
    asking, other = set(), set()
    for name, command in cli.commands.items():
        source = inspect.getsource(inspect.unwrap(command.callback))
        assert "c.memory(" not in source, f"`{name}` opens the stores itself: call backend(c)"
        (asking if "backend(c)" in source else other).add(name)
    # these open no index: a token, the daemon itself (and starting or stopping it), the checks, the usage log
    assert other == {"token", "serve", "doctor", "init", "models", "usage", "start", "stop", "restart", "ui"}
    assert {"search", "add", "recall", "index", "rebuild", "import", "mcp", "status"} <= asking


def test_a_caller_waiting_on_its_paths_job_is_answered_when_it_is_folded_into_an_earlier_one(writer_daemon, monkeypatch):
    """add's own PATHS job queued behind the watcher's for the same note: found hung 300 s over HTTP."""
    from indexer.daemon import store_writer
    from indexer.daemon.jobs import Reply
    _daemon, writer, home = writer_daemon
    gate = threading.Event()
    monkeypatch.setitem(store_writer.HANDLERS, Job.ROOT, lambda w, payload, reply: gate.wait(10) and None)
    writer.submit(Job.ROOT, None, Reply())  # holds the writer while the two below queue up
    note = str(home / "user" / "animals.md")
    writer.submit(Job.PATHS, {note})  # the watcher's event for the note add just wrote
    waiting = Reply()
    writer.submit(Job.PATHS, {note}, waiting)  # add's request, which it waits on
    gate.set()
    assert waiting.done.wait(10), "the folded job's caller was never answered"
    assert waiting.error is None
