"""Memory dynamics: the strength formula, the decay pass and its effect on ranking, and cleanup."""

import time

import pytest

from indexer.index import db
from indexer.index import sql
from indexer.sync.dynamics import DAY, half_life_days, strength

NOW = 1_800_000_000.0


def test_strength_halves_every_half_life_and_evergreen_never_decays():
    created = NOW - 30 * DAY
    assert strength(NOW, NOW, None, 3, 0, 0, False, 30) == pytest.approx(1.0)
    assert strength(NOW, created, None, 3, 0, 0, False, 30) == pytest.approx(0.5)
    assert strength(NOW, NOW - 60 * DAY, None, 3, 0, 0, False, 30) == pytest.approx(0.25)
    assert strength(NOW, NOW - 900 * DAY, None, 3, 0, 0, True, 30) == 1.0


def test_reinforcement_access_and_importance_stretch_the_half_life():
    base = half_life_days(30, 3, 0, 0)
    assert half_life_days(30, 3, 1, 0) > base
    assert half_life_days(30, 3, 0, 2) > half_life_days(30, 3, 0, 1) > base
    assert half_life_days(30, 5, 0, 0) > base > half_life_days(30, 1, 0, 0)
    old = NOW - 90 * DAY
    plain = strength(NOW, old, None, 3, 0, 0, False, 30)
    assert strength(NOW, old, None, 3, 2, 0, False, 30) > plain
    assert strength(NOW, old, None, 5, 0, 0, False, 30) > plain
    # an access restarts the clock
    assert strength(NOW, old, NOW - DAY, 3, 0, 1, False, 30) > 0.9


SAME = "The lighthouse keeper logs the tide tables every evening before dinner."


def _age(mem, store_name, uri, days):
    st = next(s for s in mem.stores() if s.name == store_name)
    when = time.time() - days * DAY
    with db.transaction(st.con):
        sql.set_chunk_times(st.con, uri, when, None)
    return st


def test_decay_pass_lowers_old_unused_chunks_and_their_rank_but_not_evergreen(make_memory):
    mem = make_memory(
        global_notes={"user/keeper.md": f"# Keeper\n\n{SAME} (user)\n"},
        project_notes={"notes/old.md": f"# Old\n\n{SAME} (old)\n", "notes/new.md": f"# New\n\n{SAME} (new)\n"})
    st_proj = _age(mem, "project", "notes/old.md", 200)
    st_glob = _age(mem, "global", "user/keeper.md", 400)
    before = [h.uri for h in mem.search("lighthouse keeper tide tables", mode="fts", bump=False)]
    reports = mem.decay()
    assert sum(r["updated"] for r in reports) >= 1
    assert max(sql.chunk_strengths(st_proj.con, "notes/old.md")) < 0.05
    assert min(sql.chunk_strengths(st_proj.con, "notes/new.md")) > 0.99
    assert sql.chunk_strengths(st_glob.con, "user/keeper.md") == [1.0]
    hits = mem.search("lighthouse keeper tide tables", mode="fts", bump=False, explain=True)
    after = [h.uri for h in hits]
    assert after[-1] == "notes/old.md" and set(after) == set(before)
    by_uri = {h.uri: h for h in hits}
    assert by_uri["notes/old.md"].explain["strength"] < 0.05
    assert by_uri["notes/old.md"].explain["dynamics"] == pytest.approx(mem.cfg.decay_floor, abs=0.03)
    assert by_uri["user/keeper.md"].explain["dynamics"] == 1.0
    assert mem.decay()[1]["updated"] == 0  # nothing changed since: the pass writes nothing


def test_cleanup_drops_vanished_files_and_orphans_and_never_touches_notes(make_memory):
    mem = make_memory(project_notes={"a.md": "# A\n\nalpha apples\n", "b.md": "# B\n\nbeta bananas\n"})
    st = mem.stores("project")[0]
    root = st.root
    (root / "b.md").unlink()  # vanished while nothing was watching
    st.con.execute("DELETE FROM chunks WHERE uri = 'a.md'")  # leaves an orphan vector and FTS rows
    notes_before = sorted(p.name for p in root.iterdir() if p.suffix == ".md")
    rep = mem.cleanup("project")[0]
    assert rep["vanished_files"] == 1 and rep["chunks_removed"] >= 1
    assert rep["orphan_vectors"] >= 1 and rep["fts_rebuilt"]
    assert sql.fts_integrity_problem(st.con) is None
    assert sql.document_uris(st.con) == ["a.md"]
    assert sorted(p.name for p in root.iterdir() if p.suffix == ".md") == notes_before
    again = mem.cleanup("project")[0]
    assert (again["vanished_files"], again["orphan_vectors"], again["fts_rebuilt"]) == (0, 0, False)
