"""Chinese (and English) keyword search in fts mode: the table from the core issue, BM25-ranked."""

import pytest

NOTES = {
    "user/cat.md": "# 宠物\n\n家里有一只橘猫，叫小橘，最爱晒太阳。\n",
    "user/dog.md": "# 日常\n\n每天早上七点带狗散步，沿着河边走一圈。\n",
    "user/python.md": "# 编程\n\n我喜欢Python写脚本，尤其是自动化的小工具。\n",
    "user/school.md": "# 教育\n\n她毕业于北京大学，读的是计算机系。\n",
    "user/db.md": "# 工作\n\n上周把数据库从 MySQL 迁移到了 PostgreSQL，停机十分钟。\n",
    "user/report.md": "# 截止日期\n\n季度报告下周五截止，需要财务数据。\n",
    "user/backup.md": "# Ops\n\nThe nightly backup runs restic against S3 at 02:00.\n",
    "user/filler.md": "# 杂记\n\n今天天气不错，适合出门走走，顺便买了点水果。\n",
}

TABLE = [
    ("猫", "user/cat.md"),
    ("狗", "user/dog.md"),
    ("喜欢", "user/python.md"),
    ("脚本", "user/python.md"),
    ("北京", "user/school.md"),
    ("写脚本", "user/python.md"),
    ("数据库", "user/db.md"),
    ("季度报告", "user/report.md"),
    ("python", "user/python.md"),
    ("backup", "user/backup.md"),
]


@pytest.fixture
def mem(make_memory):
    return make_memory(NOTES)


@pytest.mark.parametrize("query,expected", TABLE)
def test_each_query_finds_its_note_first(mem, query, expected):
    hits = mem.search(query, mode="fts", limit=5)
    assert hits, f"{query!r} found nothing"
    assert hits[0].uri == expected
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_two_character_word_does_not_match_unrelated_characters(mem):
    # 北京 must not match a note that merely contains 北 or 京 apart
    hits = mem.search("北京", mode="fts", limit=10)
    assert {h.uri for h in hits} == {"user/school.md"}


def test_multi_word_chinese_query_finds_notes_with_only_some_words(mem):
    hits = mem.search("数据库 迁移 火星 殖民", mode="fts", limit=5)
    assert hits and hits[0].uri == "user/db.md"
    hits = mem.search("季度报告和火星殖民计划", mode="fts", limit=5)
    assert hits and hits[0].uri == "user/report.md"


def test_note_matching_more_query_words_ranks_higher(make_memory):
    mem = make_memory({
        "user/a.md": "# A\n\n数据库迁移的计划已经写好了，等待评审。\n",
        "user/b.md": "# B\n\n数据库的备份在每天凌晨执行，保留三十天。\n",
    })
    hits = mem.search("数据库迁移计划", mode="fts", limit=5)
    assert [h.uri for h in hits][:2] == ["user/a.md", "user/b.md"]


FTS_SYNTAX = ['"', '""', "*", "a*", "AND", "OR", "NOT", "NEAR(", "NEAR(a b", "-x", "a:b", "content:猫", "(", ")",
              "(猫 OR", "'", "^猫", "猫 AND 狗 NOT", "{a b}", "a + b", "\\", "%", "_", "x" * 10240,
              "猫" * 5000 + " backup " * 500, "\x00", "🙂", "   ", "NEAR(猫 狗, 2)"]


@pytest.mark.parametrize("query", FTS_SYNTAX)
@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_fts_syntax_in_queries_never_raises(mem, query, mode):
    if not query.strip():
        with pytest.raises(Exception, match="query is empty"):
            mem.search(query, mode=mode)
        return
    mem.search(query, mode=mode, limit=3)


def test_syntax_characters_around_words_still_find_them(mem):
    assert mem.search('"backup', mode="fts")[0].uri == "user/backup.md"
    assert mem.search("content:猫", mode="fts")[0].uri == "user/cat.md"
