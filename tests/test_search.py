"""Search: modes, store merging, filters, min_score, explain, access counting, rebuild."""

import pytest

from indexer.index import sql
from indexer.errors import InputError

GLOBAL = {
    "user/preferences.md": "# 偏好\n\n早上只喝手冲咖啡，不加糖，也不加奶。\n\n## Editor\n\nI write code in Neovim with a dark theme.\n",
    "user/people/alex.md": "# Alex Chen\n\nAlex's birthday is on March 3rd; he likes hiking and board games.\n",
}
PROJECT = {
    "journal/2026-10-21.md": "# 2026-10-21\n\n数据库迁移事故的根本原因是迁移脚本没有加锁，两个实例同时执行。\n",
    "agent/decisions/wal.md": "---\ntype: decision\nimportance: 5\n---\n# Use SQLite WAL\n\nWe chose WAL mode and busy_timeout so readers never wait for the writer.\n",
}


@pytest.fixture
def mem(make_memory):
    return make_memory(GLOBAL, PROJECT)


@pytest.mark.parametrize("mode", ["hybrid", "fts", "vector"])
def test_modes_find_the_right_note_in_both_languages(mem, mode):
    assert mem.search("数据库迁移事故的原因", mode=mode)[0].uri == "journal/2026-10-21.md"
    assert mem.search("Alex birthday", mode=mode)[0].uri == "user/people/alex.md"


def test_scope_all_merges_both_stores_into_one_ranking(mem):
    hits = mem.search("WAL 咖啡 birthday", limit=10)
    assert {h.store for h in hits} == {"global", "project"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.store for h in mem.search("WAL 咖啡 birthday", scope="global")} == {"global"}
    assert {h.store for h in mem.search("WAL 咖啡 birthday", scope="project")} == {"project"}


def test_under_filters_by_uri_prefix_and_is_repeatable(mem):
    hits = mem.search("WAL 咖啡 birthday 数据库", under=["user/people/"], mode="hybrid")
    assert hits and {h.uri for h in hits} == {"user/people/alex.md"}
    hits = mem.search("WAL 咖啡 birthday 数据库", under=["journal/", "agent/"], mode="vector")
    assert hits and {h.uri.split("/")[0] for h in hits} <= {"journal", "agent"}
    assert mem.search("birthday", under=["nothing/"]) == []
    assert mem.search("WAL 咖啡 birthday 数据库", under=["User/People/"]) == []  # a prefix is matched as written


def test_under_reads_the_folders_rows_by_the_uri_index(mem):
    from indexer.index.sql.queries import _filter_sql
    con = mem.stores("global")[0].con
    where, params = _filter_sql(under=["user/", "agent/"])
    plan = " ".join(str(r) for r in con.execute("EXPLAIN QUERY PLAN SELECT c.id FROM chunks c WHERE 1" + where, params))
    assert "chunks_uri" in plan and "SCAN c" not in plan, plan  # a LIKE scanned every row: 0.4 s at 1M chunks


def test_min_score_and_limit(mem):
    hits = mem.search("SQLite WAL busy_timeout", limit=1)
    assert len(hits) == 1 and hits[0].uri == "agent/decisions/wal.md"
    assert all(h.score >= 0.5 for h in mem.search("SQLite WAL busy_timeout", min_score=0.5))
    with pytest.raises(InputError):
        mem.search("x", limit=0)


def test_explain_shows_components(mem):
    hit = mem.search("busy_timeout readers", explain=True)[0]
    e = hit.explain
    assert e["mode"] == "hybrid" and e["bm25"] > 0 and -1 <= e["cosine"] <= 1
    assert {"fts", "vector", "relevance", "strength", "dynamics"} <= set(e)
    assert hit.to_dict(explain=True)["explain"] == e
    assert "explain" not in hit.to_dict()


def test_every_returned_hit_bumps_access_count(mem):
    hits = mem.search("Neovim", mode="fts", limit=1)
    con = mem.stores("global")[0].con
    assert sql.chunks_by_ids(con, [hits[0].id])[0]["access_count"] == 1
    mem.search("Neovim", mode="fts", limit=1)
    assert sql.chunks_by_ids(con, [hits[0].id])[0]["access_count"] == 2


def test_hit_lines_contain_the_matched_text(mem, tmp_path):
    for hit in mem.search("busy_timeout", mode="fts") + mem.search("手冲咖啡", mode="fts"):
        root = tmp_path / ("home" if hit.store == "global" else "proj/.mdmem")
        lines = (root / hit.uri).read_text(encoding="utf-8").split("\n")[hit.start_line - 1: hit.end_line]
        assert hit.content.strip() == "\n".join(lines).strip()


def test_rrf_fusion_also_works(make_memory):
    mem = make_memory(GLOBAL, PROJECT, fusion="rrf")
    assert mem.search("Alex birthday")[0].uri == "user/people/alex.md"


def test_rebuild_swaps_in_a_fresh_index_reusing_vectors_and_counters(make_memory, counting, tmp_path):
    mem = make_memory(GLOBAL, PROJECT, embedder=counting)
    hit = mem.search("Neovim", mode="fts", limit=1)[0]
    embedded = counting.documents
    reports = mem.rebuild()
    assert counting.documents == embedded and sum(r.embedded for r in reports) == 0
    again = mem.search("Neovim", mode="fts", limit=1)[0]
    assert again.id == hit.id and again.access_count == 1
    mem.rebuild(scope="global", no_cache=True)
    assert counting.documents > embedded
    assert not list((tmp_path / "home").glob("index.db.rebuild-*"))


def test_corrupt_index_says_rebuild_and_rebuild_fixes_it(make_memory, tmp_path):
    mem = make_memory(GLOBAL, PROJECT)
    mem.close()
    path = tmp_path / "home" / "index.db"
    for suffix in ("-wal", "-shm"):
        (tmp_path / "home" / ("index.db" + suffix)).unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    from indexer.memory import Memory
    from indexer.errors import StoreError
    broken = Memory(cfg=mem.cfg, embedder=mem.embedder)
    with pytest.raises(StoreError, match="mdmem rebuild"):
        broken.search("Neovim")
    broken.rebuild()
    assert broken.search("Neovim", mode="fts")[0].uri == "user/preferences.md"
    assert list((tmp_path / "home").glob("index.db.corrupt-*"))  # the broken file is kept aside, not deleted
    broken.close()
