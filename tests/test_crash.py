"""Crash consistency: SIGKILL `mdmem index` / `rebuild` / `serve` at random points, then the index must
open, answer, and after the next index verify clean with no note changed (bench/chaos.py runs hundreds)."""

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from bench_scripts import bench_module
from indexer import config
from indexer.memory import Memory

pytestmark = pytest.mark.slow  # up to 24 kills of index, rebuild and serve, each a fresh process
chaos = bench_module("chaos")

KILL_POINTS = 24


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, usem3):
    home = tmp_path_factory.mktemp("chaos") / "home"
    home.mkdir()
    chaos.make_corpus(home, 150, seed=7)
    with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
        mem.index()
    return home


def _check_in_process(home: Path, usem3, before: dict) -> list[str]:
    """The user's next steps, in-process to keep the test fast: search, index, verify."""
    problems = []
    with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
        mem.search("database backup", limit=3)  # must open and answer (raises otherwise)
        mem.index()
        reports = mem.verify()
        problems += [d.line(r.store) for r in reports for d in r.differences]
    if chaos.note_hashes(home) != before:
        problems.append("a note changed")
    return problems


# its kill points scale with how long each command takes here, so on a loaded machine (where a rebuild that
# also fills the ranking model's vectors takes 30 s or more) the whole test takes longer than the default
@pytest.mark.timeout(1200)
def test_kill_minus_9_during_index_and_rebuild_never_leaves_an_inconsistent_index(corpus, usem3):
    rng = random.Random(20261123)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(corpus.parent / "run")}
    (corpus.parent / "run").mkdir(exist_ok=True)
    kinds = ("index", "rebuild", "rebuild --no-cache", "serve")
    # kill points scale with how long each command takes on this machine now (a quiet machine is fast)
    took = {}
    # untimed first: the first command of a session writes the model's unpacked copy and is slower
    subprocess.run(chaos.mdmem_cmd(corpus, "usem3", "index"), env=env, capture_output=True, check=True)
    for kind in kinds[:3]:
        for _ in range(2):  # the faster of two: one slow timing put kill points past the end of later runs (19 of 24)
            chaos.mutate(corpus, rng, k=25)
            t0 = time.monotonic()
            subprocess.run(chaos.mdmem_cmd(corpus, "usem3", *kind.split()), env=env, capture_output=True, check=True)
            took[kind] = min(took.get(kind, float("inf")), time.monotonic() - t0)
    took["serve"] = 2.5  # never exits by itself
    killed, bad = 0, []
    for n in range(KILL_POINTS):
        kind = kinds[n % 4]
        cmd = chaos.mdmem_cmd(corpus, "usem3", *kind.split())
        chaos.mutate(corpus, rng, k=25)
        before = chaos.note_hashes(corpus)
        was_killed = chaos.kill_after(cmd, rng.uniform(0.35, 0.9) * took[kind], env)
        killed += was_killed
        problems = _check_in_process(corpus, usem3, before)
        if problems:
            bad.append((n, kind, problems))
    assert not bad, bad
    assert killed >= 20, f"only {killed} of {KILL_POINTS} runs were killed mid-way; the commands ran faster than they were timed"


def test_killed_rebuild_leaves_no_shadow_files_behind_after_the_next_rebuild(corpus, usem3):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    chaos.kill_after(chaos.mdmem_cmd(corpus, "usem3", "rebuild", "--no-cache"), 1.2, env)
    with Memory(cfg=config.load(home=corpus, env={}), embedder=usem3) as mem:
        mem.rebuild()
    assert not list(corpus.glob("index.db.rebuild-*"))
