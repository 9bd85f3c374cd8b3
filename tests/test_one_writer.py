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


def test_every_kind_of_job_names_its_handler_in_one_table_per_writer():
    from indexer.daemon.store_writer import HANDLERS
    from indexer.store_jobs import LOCAL_JOBS, STORE_JOBS
    assert set(HANDLERS) == set(Job)  # the daemon's writer thread runs every kind
    assert not set(STORE_JOBS) & set(LOCAL_JOBS)  # a kind run alike is not also run another way in this process
    # this process counts accesses at once (record_access); a look at the root and a retry are the daemon's own
    assert set(STORE_JOBS) | set(LOCAL_JOBS) == set(Job) - {Job.ACCESS, Job.ROOT, Job.RETRY}


def test_a_write_declared_once_runs_in_this_process_and_in_the_daemons_writer(writer_daemon, monkeypatch):
    from indexer import store_jobs
    daemon, writer, home = writer_daemon
    seen = []

    def carry(st, payload, cfg, warn):
        seen.append((st.name, payload, st.con.readonly("main")))
        return "carried"

    monkeypatch.setitem(store_jobs.STORE_JOBS, Job.CARRY, carry)
    assert daemon.reader().writer.carry_counters("global", "user/animals.md", 3, {"a": 1}) == "carried"
    with Memory(cfg=writer.cfg, embedder=writer.embedder) as local:
        assert local.writer.carry_counters("global", "user/animals.md", 3, {"a": 1}) == "carried"
    # the same handler both times, each on a connection that may write: the daemon's writer thread, then this one
    assert seen == [("global", ("user/animals.md", 3, {"a": 1}), False)] * 2


def test_a_memory_made_while_its_store_is_retired_is_never_lent_again(writer_daemon, monkeypatch):
    """A writer thread retires the lent Memory objects (its store's file was replaced) while a request thread is
    making one: that one may hold the old file, so it is closed when given back, not pooled."""
    from indexer.daemon import lending
    daemon, _writer, _home = writer_daemon
    pool = daemon.memories

    class RetiredWhileMade(Memory):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pool.retire(wait=False)

    monkeypatch.setattr(lending, "Memory", RetiredWhileMade)
    first = pool.take()
    pool.give_back(first)
    monkeypatch.setattr(lending, "Memory", Memory)
    second = pool.take()
    assert second is not first
    pool.give_back(second)
    assert pool.take() is second  # made after the retire: lent again


def test_the_pool_and_its_writer_use_only_the_parts_of_the_daemon_they_are_given(writer_daemon):
    from indexer import log
    from indexer.daemon.lending import MemoryPool
    from indexer.daemon.writer_jobs import Serving
    _daemon, writer, _home = writer_daemon
    jobs = []

    def run_job(job, scope, payload, progress, project):
        jobs.append((job, scope))
        return [writer.call(job, payload)]

    serving = Serving(config=lambda: writer.cfg, embedder=lambda: writer.embedder, kept=lambda: None,
                      writer=lambda name, project: writer if name == "global" else None, run_job=run_job,
                      status=lambda project: {}, stopping=threading.Event(), log=log.get())
    with MemoryPool(serving).lend() as mem:
        assert mem.add("The lighthouse keeper paints the door blue", type="fact")["indexed"]
        assert mem.search("lighthouse door", mode="fts")[0].uri == "user/fact.md"
        assert mem.decay()[0]["store"] == "global"
    assert jobs == [(Job.DECAY, "all")]
