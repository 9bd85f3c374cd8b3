"""Promises the README makes that no other test pins: fusion, settings precedence, rebuild swaps, the daemon."""

import json
import os
import signal
import threading
import time

import pytest
from cli_process import mdmem
from daemon_harness import Served, eventually, write

from indexer import config
from indexer.index import db
from indexer.index import sql
from indexer.memory import Memory
from indexer.retrieval import fusion

NOTES = {
    "user/tea.md": "# Tea\n\n- I drink oolong tea every morning without sugar.\n",
    "user/茶.md": "# 茶\n\n- 我每天早上喝乌龙茶，不加糖。\n",
    "journal/2024-03-02.md": "# Garden\n\n- Planted tomatoes and basil; the tea bush needs shade.\n",
    "journal/2024-03-09.md": "# Kitchen\n\n- Brewed green tea for guests; they preferred coffee.\n",
}


def test_weighted_fusion_is_one_minus_w_text_plus_w_scaled_cosine():
    a = fusion.Candidate(("g", "a"), {}, bm25=10.0, similarity=0.50)
    b = fusion.Candidate(("g", "b"), {}, bm25=4.0, similarity=0.80)
    c = fusion.Candidate(("g", "c"), {}, bm25=None, similarity=0.60)  # full text missed it
    out = fusion.weighted([a, b, c], 0.3)
    # min-max scaling: bm25 10 -> 1, 4 -> 0; cosine 0.5 -> 0, 0.8 -> 1, 0.6 -> 1/3; a miss counts 0
    assert out[a.key]["score"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert out[b.key]["score"] == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert out[c.key]["score"] == pytest.approx(0.7 * 0.0 + 0.3 * (1 / 3))
    with_feedback = fusion.weighted([a, b], 0.3, feedback_weight=0.5)  # no feedback hit: text shrinks by 1/(1+f)
    assert with_feedback[a.key]["score"] == pytest.approx(0.7 * (1.0 / 1.5))


@pytest.mark.parametrize("query, weight", [("oolong tea without sugar", 0.3), ("乌龙茶 不加糖", 0.1)])
def test_chinese_queries_give_the_vector_a_weight_of_0_1_and_others_0_3(make_memory, query, weight):
    mem = make_memory(NOTES)
    assert (mem.cfg.vector_weight, mem.cfg.vector_weight_han) == (0.3, 0.1)  # the defaults the docs state
    hits = mem.search(query, mode="hybrid", explain=True, bump=False)
    assert hits
    fw = mem.cfg.feedback_weight
    for h in hits:
        e = h.explain
        text = (e["fts"] + fw * e["feedback"]) / (1 + fw)
        assert e["relevance"] == pytest.approx((1 - weight) * text + weight * e["vector"], abs=1e-5), e


def run_cli(home, *args, env_extra=None):
    return mdmem("--home", str(home), *args, base_env={k: v for k, v in os.environ.items() if not k.startswith("MDMEM_")},
                 env=env_extra, cwd=str(home))


def test_settings_come_from_file_then_environment_then_flags(tmp_path):
    home = tmp_path / "home"
    for i in range(6):
        write(home / "user" / f"n{i}.md", f"# Note {i}\n\nThe heron number {i} fished at dawn.\n")
    assert run_cli(home, "--embedder", "none", "index").returncode == 0

    def hits(*flags, env=None):
        r = run_cli(home, "--embedder", "none", "search", "heron", "--json", *flags, env_extra=env)
        assert r.returncode == 0, r.stderr
        return len(json.loads(r.stdout)["results"])

    assert hits() == 6  # the default limit (10) is above the six notes
    (home / "config.toml").write_text("limit = 2\n")
    assert hits() == 2  # the file beats the default
    assert hits(env={"MDMEM_LIMIT": "3"}) == 3  # the environment beats the file
    assert hits("--limit", "4", env={"MDMEM_LIMIT": "3"}) == 4  # a flag beats both
    cfg = config.load(home=home, env={"MDMEM_LIMIT": "3", "MDMEM_MODE": "fts"}, mode="vector")
    assert (cfg.limit, cfg.mode) == (3, "vector")


def test_searches_during_rebuild_swaps_never_see_half_an_index(make_memory):
    notes = {f"journal/day-{i:03d}.md": f"# Day {i}\n\n- Counted {i} kittiwakes on the cliff ledge today.\n"
             for i in range(150)}
    mem = make_memory(notes)
    want = set(notes)
    reader = Memory(cfg=mem.cfg, embedder=mem.embedder)
    seen, errors, stop = [], [], threading.Event()

    def search_loop():
        while not stop.is_set():
            try:
                seen.append({h.uri for h in reader.search("kittiwakes", mode="fts", limit=500, bump=False)})
            except Exception as exc:  # any error is a reader that saw a half-swapped file
                errors.append(exc)
                return

    t = threading.Thread(target=search_loop)
    t.start()
    try:
        for _ in range(3):
            mem.rebuild(scope="global")
    finally:
        stop.set()
        t.join()
        reader.close()
    assert not errors, errors
    assert len(seen) > 3 and all(s == want for s in seen), [len(s) for s in seen if s != want][:5]


# ---- the daemon: the periodic rescan, SIGTERM in the middle of indexing --------------------------------------

def test_the_periodic_rescan_repairs_what_no_event_reported(tmp_path):
    d = Served(tmp_path)
    write(d.home / "config.toml", "reconcile_minutes = 0.05\n")  # every 3 s
    write(d.notes / "tern.md", "# Tern\n\nArctic terns fly from pole to pole.\n")
    d.start()
    try:
        assert d.uris("terns") == {"tern.md"}
        con = db.connect(d.notes / "index.db")
        try:  # the index loses the note behind the daemon's back: no file event will say so
            with db.transaction(con):
                sql.delete_by_uri(con, "tern.md")
        finally:
            con.close()
        assert not d.uris("terns")
        assert eventually(lambda: d.uris("terns") == {"tern.md"}, timeout=60), d.log.read_text()
    finally:
        assert d.stop() == 0, d.log.read_text()


def test_sigterm_while_notes_are_being_indexed_exits_0_and_leaves_no_half_note(tmp_path):
    d = Served(tmp_path)
    write(d.notes / "seed.md", "# Seed\n\nseedword\n")
    d.start()
    body = "\n\n".join(f"## Part {i}\n\nThe albatross glides for hours over the southern ocean, part {i}."
                       for i in range(60))
    for i in range(40):
        write(d.notes / "birds" / f"albatross-{i}.md", f"# Albatross {i}\n\n{body}\n")
    deadline = time.monotonic() + 30
    while '"event": "files_indexed"' not in d.log.read_text() and '"event": "file_indexed"' not in d.log.read_text():
        assert time.monotonic() < deadline, d.log.read_text()
        time.sleep(0.02)
    assert d.stop(signal.SIGTERM) == 0, d.log.read_text()
    r = d.cli("verify", "--json")
    kinds = {diff["kind"] for rep in json.loads(r.stdout)["stores"].values() for diff in rep["differences"]}
    assert kinds <= {"unindexed"}, r.stdout  # notes not reached yet, never a note indexed in part
    d.start()  # the next start picks up the rest
    try:
        assert eventually(lambda: len(d.uris("albatross")) == 40, timeout=120)
    finally:
        assert d.stop() == 0
    assert d.cli("verify").returncode == 0
