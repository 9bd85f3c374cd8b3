"""Full-text top k that skips rows holding only common words: the same ranking as scoring every row."""

import random

import pytest

from indexer.index import db, sql
from indexer.index.sql import fts_topk, text_stats

pytestmark = pytest.mark.unit

COMMON = ["river", "stone", "light", "water", "garden", "年", "月"]
RARE = ["heron", "kingfisher", "otter", "lantern", "compass", "薄荷", "灯塔", "琥珀", "sparrow", "quartz"]


def _note(rng: random.Random, i: int) -> str:
    words = [w for w in COMMON if rng.random() < 0.6]  # each in about 60% of the notes
    words += [w for w in RARE if rng.random() < 0.04]  # each in about 4%
    words += [f"filler{rng.randrange(300)}" for _ in range(rng.randrange(2, 30))]  # lengths vary
    rng.shuffle(words)
    return f"# Note {i}\n\n" + " ".join(words) + "\n"


@pytest.fixture
def skewed(make_memory, none_embedder):
    rng = random.Random(5)
    return make_memory({f"n{i:03d}.md": _note(rng, i) for i in range(600)}, embedder=none_embedder)


def _queries(rng: random.Random) -> list[list[str]]:
    out = []
    for _ in range(60):
        words = rng.sample(COMMON, rng.randrange(1, 5)) + rng.sample(RARE, rng.randrange(1, 4))
        rng.shuffle(words)
        out.append(words)
    return out


@pytest.mark.parametrize("probe_rows", [10_000, 1])  # 1: the first probe is the rarest phrase alone, as at 1M chunks
def test_pruned_top_k_is_the_plain_top_k(skewed, monkeypatch, probe_rows):
    monkeypatch.setattr(fts_topk, "PROBE_ROWS", probe_rows)
    con = skewed.stores("global")[0].con
    chunks = sql.chunk_count(con)
    monkeypatch.setattr(fts_topk, "PLAIN_ROWS", 0)  # prune even this small store
    monkeypatch.setattr(fts_topk, "SHARE", 0.5)
    pruned = []
    real = fts_topk._rows_holding
    monkeypatch.setattr(fts_topk, "_rows_holding", lambda *a: pruned.append(1) or real(*a))
    for words in _queries(random.Random(9)):
        match = " OR ".join(f'"{w}"' for w in words)
        for k in (5, 20):
            want = fts_topk._plain(con, match, k, "", ())
            got = fts_topk.top_rowids(con, match, k, chunks)
            assert [r for r, _s in got] == [r for r, _s in want], match
            assert [s for _r, s in got] == pytest.approx([s for _r, s in want], rel=1e-9), match
    assert len(pruned) > 30  # the rows holding only common words were skipped, not scored anyway


def test_pruned_top_k_keeps_a_filter(skewed, monkeypatch):
    con = skewed.stores("global")[0].con
    monkeypatch.setattr(fts_topk, "PLAIN_ROWS", 0)
    monkeypatch.setattr(fts_topk, "SHARE", 0.5)
    where, params = " AND c.uri < ?", ["n300.md"]
    for words in _queries(random.Random(4))[:20]:
        match = " OR ".join(f'"{w}"' for w in words)
        want = fts_topk._plain(con, match, 10, where, params)
        got = fts_topk.top_rowids(con, match, 10, sql.chunk_count(con), where, params)
        assert [r for r, _s in got] == [r for r, _s in want], match
    uris = {r["uri"] for r in sql.fts_search(con, '"river" OR "heron"', 50, under=None) if r["uri"] >= "n300.md"}
    assert uris  # the filter above had rows to leave out


def test_phrases_of_reads_only_quoted_or_lists():
    assert fts_topk.phrases_of('"a" OR "b c" OR "say ""hi"""') == ['"a"', '"b c"', '"say ""hi"""']
    assert fts_topk.phrases_of('"a" AND "b"') is None
    assert fts_topk.phrases_of('a OR b') is None


def test_phrase_counts_are_the_rows_each_phrase_matches(skewed):
    con = skewed.stores("global")[0].con
    phrases = ['"river"', '"Herons"', '"灯塔"', '"filler1 filler2"', '"年"', '"absent"']
    want = [db.rows(con, "SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?", [p])[0]["n"] for p in phrases]
    assert text_stats.phrase_doc_counts(con, phrases) == want
    assert want[0] > 200 and want[-1] == 0


def test_capped_counts_are_the_vocabulary_counts_cut_at_the_cap(skewed):
    con = skewed.stores("global")[0].con
    words = [("river", "river"), ("Herons", "heron"), ("灯塔", "灯塔"), ("filler7", "filler7"), ("absent", "absent")]
    exact = sql.term_doc_counts(con, [t for _w, t in words])
    assert exact["river"] > 200  # about 60% of the 600 notes
    for cap in (1, 5, 64, 100_000):
        con.memo_state = None  # each cap from an empty memo, then again from what the others left
        for _ in range(2):
            for surface, term in words:
                assert text_stats.term_doc_count_upto(con, term, surface, cap) == min(exact.get(term, 0), cap)
    # "can't" is two terms: its count is read from the vocabulary, not from a MATCH of both
    assert text_stats.term_doc_count_upto(con, "filler7", "can't filler7", 10_000) == exact["filler7"]


def test_statistics_outlive_counter_commits_not_content_commits(make_memory, none_embedder):
    mem = make_memory({"a.md": "# A\n\nThe heron waits by the river.\n"}, embedder=none_embedder)
    st = mem.stores("global")[0]
    reader = db.connect(st.index_path, readonly=True)
    try:
        assert sql.term_doc_counts(reader, ["heron"]) == {"heron": 1}
        kept = text_stats._known(reader)
        hit = mem.search("heron", mode="fts")[0]
        mem.get(hit.id)  # reading counts an access: a commit that leaves the text alone
        with db.transaction(st.con):
            st.con.execute("UPDATE chunks SET access_count = access_count + 1")
        assert text_stats._known(reader) is kept
        (mem.cfg.home / "b.md").write_text("# B\n\nA heron again.\n", encoding="utf-8")
        mem.index()
        assert text_stats._known(reader) is not kept
        assert sql.term_doc_counts(reader, ["heron"]) == {"heron": 2}
    finally:
        reader.close()
