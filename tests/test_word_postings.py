"""A big store's kept common words give FTS5's own top k, and stay right while notes are added, edited and removed."""

import os
import random
from collections import Counter

import pytest

from indexer.index import db, sql
from indexer.index.sql import fts_topk
from indexer.kept import word_postings
from indexer.retrieval import full_text
from indexer.kept.word_postings import WordPostings

pytestmark = pytest.mark.unit

COMMON = ["river", "stone", "light", "water", "garden", "年", "月", "meetings"]
RARE = ["heron", "kingfisher", "otter", "lantern", "compass", "薄荷", "灯塔", "琥珀", "sparrow", "quartz"]


def _note(rng: random.Random, i: int) -> str:
    words = [w for w in COMMON if rng.random() < 0.5]
    words += [w for w in RARE if rng.random() < 0.04]
    words += [f"filler{rng.randrange(300)}" for _ in range(rng.randrange(2, 30))]
    words += ["river"] * rng.randrange(0, 3)  # counts above one
    rng.shuffle(words)
    section = rng.choice(["Garden notes", "Stone", "Light and water", "杂记"])
    return f"# {section} {i}\n\n" + " ".join(words) + "\n\n## 灯塔 and river\n\nmore " + " ".join(words[:3]) + "\n"


@pytest.fixture
def skewed(make_memory, none_embedder, monkeypatch):
    monkeypatch.setattr(word_postings, "COMMON_MIN", 20)  # common words of a small store
    rng = random.Random(5)
    return make_memory({f"n{i:03d}.md": _note(rng, i) for i in range(300)}, embedder=none_embedder)


def _queries(rng: random.Random, n: int = 40) -> list[str]:
    out = []
    for _ in range(n):
        words = rng.sample(COMMON, rng.randrange(1, 5)) + rng.sample(RARE, rng.randrange(0, 3))
        words += ["filler7 filler8"] if rng.random() < 0.2 else []  # a two-word phrase: FTS5's part
        rng.shuffle(words)
        out.append(" OR ".join(f'"{w}"' for w in words))
    return out


def _same(con, words, where="", params=(), queries=None, k_list=(5, 20)) -> int:
    answered = 0
    for match in queries or _queries(random.Random(9)):
        for k in k_list:
            want = fts_topk._plain(con, match, k, where, params)
            got = full_text.top_rowids(words, con, match, k, where, params)
            if got is None:
                continue
            answered += 1
            assert [r for r, _s in got] == [r for r, _s in want], match
            assert [s for _r, s in got] == pytest.approx([s for _r, s in want], rel=1e-9), match
    return answered


def _made(st) -> WordPostings:
    words = WordPostings(os.path.realpath(st.index_path))
    with words.lock:
        words.refresh(st.con)
    assert words.wait(60)
    return words


def test_stored_words_are_the_ones_fts5_counts(skewed):
    con = skewed.stores("global")[0].con
    for rowid, content, uri, section in sql.fts_rows_after(con, 0)[:40]:
        mine, length = Counter(), 0
        for col, text in zip(word_postings.COLUMNS, (content, uri, section)):
            positions = db.stored_terms(con, text)
            length += len(positions)
            mine.update((t, col) for terms in positions for t in terms)
        for (term, col), n in mine.items():
            rows = {r: counts for r, *counts in sql.term_rows(con, term)}
            assert rows[rowid][word_postings.COLUMNS.index(col)] == n, (term, col)
        assert sql.row_lengths_for(con, [rowid]) == {rowid: length}


@pytest.mark.parametrize("prune", [False, True])
def test_kept_words_give_fts5s_top_k(skewed, monkeypatch, prune):
    st = skewed.stores("global")[0]
    words = _made(st)
    assert words.holds("river") and words.holds("meet") and words.holds("年") and not words.holds("heron")
    pruned = []
    if prune:  # bound the words left after every word, as a big store's questions do
        monkeypatch.setattr(full_text, "PRUNE_ROWS", 0)
        floor = full_text._kth_floor
        monkeypatch.setattr(full_text, "_kth_floor", lambda acc, k: pruned.append(floor(acc, k)) or pruned[-1])
    assert _same(st.con, words, k_list=(1, 5, 20)) > 60
    assert not prune or sum(1 for f in pruned if f > 0) > 30


@pytest.mark.parametrize("narrow", [5_000, 0])
def test_kept_words_keep_a_filter(skewed, monkeypatch, narrow):
    st = skewed.stores("global")[0]
    words = _made(st)
    monkeypatch.setattr(full_text, "NARROW_ROWS", narrow)  # 0: never score the filter's rows alone
    # few rows let through (a time window, a small space): scored alone, or the scores masked
    assert _same(st.con, words, " AND c.uri < ?", ["n100.md"]) > 60
    assert full_text.top_rowids(words, st.con, '"river"', 5, " AND c.uri = ?", ["nothing.md"]) == []
    # many: the ranking is read down until k pass
    monkeypatch.setattr(full_text, "FILTER_ROWS", 50)
    assert _same(st.con, words, " AND c.uri < ?", ["n100.md"]) > 60


def test_kept_words_follow_adds_edits_and_removals(skewed):
    mem = skewed
    st = mem.stores("global")[0]
    words = _made(st)
    snap = words._snap
    home = mem.cfg.home
    rng = random.Random(11)
    for round_ in range(3):
        for i in rng.sample(range(300), 20):  # edits: rows removed and written again
            (home / f"n{i:03d}.md").write_text(_note(rng, 1000 + i), encoding="utf-8")
        for i in range(5):
            (home / f"new{round_}-{i}.md").write_text(_note(rng, 2000 + i), encoding="utf-8")
        for i in rng.sample(range(300), 5):
            (home / f"n{i:03d}.md").unlink(missing_ok=True)
        mem.index()
        assert _same(st.con, words, queries=_queries(random.Random(round_), 20)) > 20
        assert _same(st.con, words, " AND c.uri < ?", ["n150.md"], queries=_queries(random.Random(round_), 10)) > 10
    assert words._snap is snap  # followed, not made again
    # the newest row removed and a new row given its rowid: still followed
    top = sql.fts_rowid_top(st.con)
    uri = [u for r, _c, u, _s in sql.fts_rows_after(st.con, top - 1)][0]
    (home / uri).unlink()
    mem.index()
    (home / "again.md").write_text("# Again\n\nriver river stone lantern\n", encoding="utf-8")
    mem.index()
    assert sql.fts_rowid_top(st.con) <= top  # given again
    assert _same(st.con, words, queries=['"river" OR "stone" OR "lantern"', '"lantern"  OR "river"']) > 0
    assert _same(st.con, words, " AND c.uri >= ?", ["again"], queries=['"river" OR "stone"']) > 0


def test_kept_words_are_read_back_and_caught_up(skewed):
    mem = skewed
    st = mem.stores("global")[0]
    first = _made(st)
    assert os.path.exists(str(st.index_path) + ".words") and os.stat(str(st.index_path) + ".words").st_mode & 0o777 == 0o600
    (mem.cfg.home / "later.md").write_text("# Later\n\nriver stone water kingfisher\n", encoding="utf-8")
    (mem.cfg.home / "n010.md").unlink()
    mem.index()
    second = WordPostings(os.path.realpath(st.index_path))
    built = []
    second._renew = lambda con: built.append(1)  # reading the file must be enough
    with second.lock:
        second.refresh(st.con)
    assert second.wait(60) and not built
    assert second._snap.top == first._snap.top
    assert _same(st.con, second) > 60


def test_a_rebuilt_index_is_not_mistaken_for_the_kept_one(skewed):
    mem = skewed
    st = mem.stores("global")[0]
    words = _made(st)
    old = words._snap
    for i in range(0, 300, 3):
        (mem.cfg.home / f"n{i:03d}.md").unlink()
    mem.rebuild()
    st = mem.stores("global")[0]
    with words.lock:
        assert not words.refresh(st.con)  # the sample no longer matches: made again
    assert words.wait(60) and words._snap is not old
    assert _same(st.con, words) > 60


def test_the_runs_of_one_search_share_the_scores(skewed, monkeypatch):
    """A time-word question asks the same words inside its window, then outside: scored once, both FTS5's."""
    st = skewed.stores("global")[0]
    words = _made(st)
    scored = []
    real = full_text._add_words
    monkeypatch.setattr(full_text, "_add_words", lambda *a: scored.append(1) or real(*a))
    match = '"river" OR "stone" OR "heron"'
    made: dict = {}
    inside = full_text.top_rowids(words, st.con, match, 10, " AND c.uri < ?", ["n100.md"], made)
    outside = full_text.top_rowids(words, st.con, match, 10, "", (), made)
    assert len(scored) == 1
    assert inside == fts_topk._plain(st.con, match, 10, " AND c.uri < ?", ["n100.md"])
    assert [r for r, _s in outside] == [r for r, _s in fts_topk._plain(st.con, match, 10, "", ())]


def test_the_owner_keeps_a_big_stores_words_for_search_and_lets_them_go(skewed, monkeypatch):
    from indexer.kept import owner
    from indexer.kept.owner import KeptCopies
    from indexer.memory import Memory

    mem = skewed
    questions = ["river stone", "灯塔 garden", "light water meetings", "kingfisher river"]
    plain = {q: [(h.uri, h.score) for h in mem.search(q, mode="fts", bump=False)] for q in questions}
    kept = KeptCopies(keep=True)
    with Memory(cfg=mem.cfg, embedder=mem.embedder, kept=kept) as served:  # as the daemon lends one
        st = served.stores("global")[0]
        assert kept.words(st) is None  # 300 chunks: below MIN_ROWS, FTS5 alone
        monkeypatch.setattr(owner, "MIN_ROWS", 100)
        kept.warm([st])  # starts reading or making them in the background
        words = kept.words(st)
        assert words.wait(60) and kept.state(st.index_path)["kept_words"] == "words"
        assert full_text.doc_counts(st) is not None and words.nbytes() > 0
        answered = []
        real = full_text.top_rowids
        monkeypatch.setattr(full_text, "top_rowids", lambda *a, **k: answered.append(1) or real(*a, **k))
        got = {q: [(h.uri, h.score) for h in served.search(q, mode="fts", bump=False)] for q in questions}
        assert answered and all([u for u, _s in got[q]] == [u for u, _s in plain[q]] for q in questions)
        assert all([s for _u, s in got[q]] == pytest.approx([s for _u, s in plain[q]], rel=1e-6) for q in questions)
        assert full_text.doc_counts(mem.stores("global")[0]) is None  # the in-process Memory keeps none
        kept.drop()
        assert not words.ready and words.nbytes() == 0 and kept.state(st.index_path)["kept_words"] is None
        assert full_text.ranker(st) is None  # nothing is made again once dropped
