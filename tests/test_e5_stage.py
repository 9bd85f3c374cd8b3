"""The ranking stage: multilingual-e5-small re-scores hybrid candidates from vectors kept per chunk text."""

import pytest

from indexer import ranking_model
from indexer.index import db, sql
from indexer.notes.chunker import parse_note
from indexer.retrieval import ranking_stage
from ranking_pairs import PAIRS

FAMILY = {"user/family.md": "---\ntype: fact\n---\n# Family\n\n"
          "- 2026-03-01: 我女儿今年六岁，最喜欢画画和游泳。\n"
          "- 2026-03-01: 我的孩子今年八岁，上小学三年级。\n"
          "- 2026-03-02: I take my coffee black, no sugar.\n"
          "- 2026-03-03: 周末喜欢去郊外骑自行车。\n"
          "- 2026-03-04: 工作日早上七点出门上班。\n"}


def counted_passages(monkeypatch) -> list[int]:
    """Count the texts the model embeds (the real model still embeds them)."""
    seen: list[int] = []
    real = ranking_model.passages

    def passages(texts):
        seen.append(len(texts))
        return real(texts)
    monkeypatch.setattr(ranking_model, "passages", passages)
    return seen


# question -> its answer; each answer sits beside a memory sharing its topic or words (pairs from zh-memory-dev)
ASKED = {"我家的鸟叫什么名字？": "小蓝", "What is my bird called?": "小蓝", "坐车时我有什么毛病？": "晕车",
         "外婆多大年纪了？": "九十岁"}


def test_the_stage_puts_the_answer_above_a_same_topic_distractor(make_memory):
    first = {}
    for rerank in (False, True):
        mem = make_memory(global_notes=PAIRS, rerank=rerank)
        first[rerank] = {q: mem.search(q, explain=True, limit=2, bump=False) for q in ASKED}
        mem.close()
    assert all(want in first[True][q][0].content for q, want in ASKED.items()), first[True]
    assert all(first[True][q][0].explain["e5_cosine"] > 0.5 for q in ASKED)
    assert any(want not in first[False][q][0].content for q, want in ASKED.items())  # the first stage alone misses


def test_vectors_are_kept_per_text_reused_by_rebuild_and_dropped_with_another_model(make_memory, monkeypatch):
    mem = make_memory(global_notes=FAMILY)
    con = mem.stores("global")[0].con
    done, total = sql.e5_progress(con)
    assert done == total == 5 and mem.status()["global"]["e5"] == [5, 5]
    seen = counted_passages(monkeypatch)
    mem.rebuild()
    assert sum(seen) == 0  # the live file's vectors moved into the rebuilt one
    con = mem.stores("global")[0].con
    assert sql.e5_progress(con) == (5, 5)
    with db.transaction(con):
        con.execute("UPDATE meta SET value = 'another-model' WHERE key = 'e5_model'")
    mem.index()
    assert sum(seen) == 5 and sql.e5_progress(con) == (5, 5)
    assert sql.read_meta(con)["e5_model"] == ranking_model.model_id()


def test_an_edit_is_ranked_by_the_stage_at_once(make_memory):
    mem = make_memory(global_notes=FAMILY)
    mem.add("我儿子最近迷上了下围棋。", scope="global")
    assert sql.e5_progress(mem.stores("global")[0].con) == (6, 6)
    hits = mem.search("儿子的兴趣是什么", explain=True, limit=2, bump=False)
    assert "围棋" in hits[0].content and hits[0].explain["e5_cosine"] is not None


def test_search_keeps_its_first_stage_when_the_model_cannot_load(make_memory, monkeypatch):
    mem = make_memory(global_notes=FAMILY)
    monkeypatch.setattr(ranking_model, "_state", {"error": "OSError: engine missing"})
    hits = mem.search("我的孩子有什么爱好？", explain=True, limit=3, bump=False)
    assert hits and all("e5_cosine" not in h.explain for h in hits)
    assert mem.recall("我的孩子有什么爱好？")["memories"]


def test_without_stored_vectors_the_ranking_is_the_first_stage(make_memory):
    on = make_memory(global_notes=FAMILY, rerank=False)
    assert sql.e5_progress(on.stores("global")[0].con) == (0, 5)
    hits = on.search("我的孩子有什么爱好？", explain=True, limit=3, bump=False)
    assert hits and all("e5_cosine" not in h.explain for h in hits)


def test_recall_stops_where_relevance_falls_off(make_memory):
    mem = make_memory(global_notes=PAIRS)
    lines = [m["text"] for m in mem.recall("我家的鸟叫什么名字？")["memories"]]
    assert lines and "小蓝" in lines[0]
    assert not any("晕车" in t or "开车" in t or "奶奶" in t for t in lines), lines
    assert len(mem.recall("我家的鸟叫什么名字？", limit=6)["memories"]) < 6


DEADLINES = """---
type: fact
---
# 季度报告

季度报告发给 Alex。截止日期是每个季度结束后第三周的周五。

### 核对清单

1. 对账：发票总额要和银行流水一致。
2. 检查汇率。
3. 发之前让王芳过一眼排版。

## 其他

- 每月 5 号前提交上个月的报销。
- 2026-03-01: 年度述职在 12 月第二周。
"""


def test_a_numbered_procedure_is_one_section_and_an_undated_item_has_no_date():
    chunks = parse_note(DEADLINES, "user/deadlines.md").chunks
    steps = [c for c in chunks if "对账" in c.content]
    assert len(steps) == 1 and steps[0].kind == "section" and "汇率" in steps[0].content
    assert "核对清单" in steps[0].section and "截止日期" not in steps[0].content
    kinds = {c.content.splitlines()[-1]: (c.kind, c.date) for c in chunks}
    assert kinds["- 每月 5 号前提交上个月的报销。"] == ("memory", None)
    assert kinds["- 2026-03-01: 年度述职在 12 月第二周。"] == ("memory", "2026-03-01")


def test_the_answer_paragraph_is_first_not_the_checklist(make_memory):
    mem = make_memory(global_notes={"user/deadlines.md": DEADLINES})
    hits = mem.search("季度报告什么时候截止", limit=3, bump=False)
    assert "第三周的周五" in hits[0].content
    assert len({round(h.score, 4) for h in hits}) == len(hits)  # no ties


@pytest.mark.parametrize("texts", [[], ["一"]])
def test_passages_shape(texts):
    assert ranking_model.passages(texts).shape == (len(texts), 384)
    assert ranking_stage.STAGE_POOL >= 10


def test_a_question_runs_the_engine_on_one_thread():
    import threading
    m = ranking_model.load("query")
    assert m is not None, ranking_model.load_error()
    seen = []

    def ask():
        vec = ranking_model.query("我女儿喜欢什么？")
        seen.append((len(vec), m._lib.omp_get_max_threads()))

    t = threading.Thread(target=ask)
    t.start()
    t.join(60)
    # a new thread starts at OpenMP's default (every core); one thread was faster alone and twice as fast beside
    # the other legs of a hybrid search
    assert seen == [(384, 1)]


def test_index_returns_before_the_ranking_vectors_and_the_next_sync_fills_them(make_memory, monkeypatch, tmp_path):
    from conftest import write_notes
    from indexer.sync import ranking_vectors
    # ranking_fill_s 0: a machine too busy to embed one text in time
    mem = make_memory(global_notes=FAMILY, ranking_fill_s=0.0)
    con = mem.stores("global")[0].con
    assert sql.e5_progress(con) == (5, 5)  # a store this small is filled all the same
    monkeypatch.setattr(ranking_vectors, "FILL_ALL_UNDER", 4)  # six new texts stand for a big build
    write_notes(tmp_path / "home", PAIRS)
    mem.index()
    assert sql.e5_progress(con) == (5, 11) and mem.status()["global"]["e5"] == [5, 11]
    hits = mem.search("鹦鹉叫什么", explain=True, limit=3, bump=False)
    assert "小蓝" in hits[0].content and "e5_cosine" not in hits[0].explain  # searchable already
    mem.cfg = mem.cfg.with_(ranking_fill_s=-1.0)  # all of them before it returns
    mem.index()
    assert sql.e5_progress(con) == (11, 11)
    assert all(want in mem.search(q, limit=1, bump=False)[0].content for q, want in ASKED.items())


def test_a_big_build_leaves_the_ranking_vectors_to_the_next_sync_and_the_daemons_fill(make_memory, monkeypatch,
                                                                                          tmp_path):
    from conftest import write_notes
    from indexer.sync import ranking_vectors, vector_fill
    mem = make_memory(global_notes=FAMILY, ranking_fill_s=60.0)  # a deadline the build could fill them all in
    con = mem.stores("global")[0].con
    assert sql.e5_progress(con) == (5, 5)  # a small change is filled before the command returns
    monkeypatch.setattr(ranking_vectors, "FILL_ALL_UNDER", 4)  # six new texts stand for a big build
    seen = counted_passages(monkeypatch)
    write_notes(tmp_path / "home", PAIRS)
    mem.index()
    assert sum(seen) == 0 and mem.status()["global"]["e5"] == [5, 11]  # searchable at the embedder's speed
    hits = mem.search("鹦鹉叫什么", explain=True, limit=3, bump=False)
    assert "小蓝" in hits[0].content and "e5_cosine" not in hits[0].explain
    mem.index()  # nothing new to embed: this sync gives the stage its seconds
    assert sum(seen) == 6 and mem.status()["global"]["e5"] == [11, 11]
    assert all(want in mem.search(q, limit=1, bump=False)[0].content for q, want in ASKED.items())
    write_notes(tmp_path / "home", {f"journal/day{i}.md": f"- 2026-04-0{i}: 今天第{i}次去海边散步。\n" for i in range(1, 6)})
    mem.index()
    assert mem.status()["global"]["e5"] == [11, 16]
    filler = vector_fill.Filler()  # what the daemon runs between jobs
    while not filler.step(mem.stores("global")[0], mem.embedder, mem.cfg):
        pass
    assert mem.status()["global"]["e5"] == [16, 16]


def test_a_hit_still_waiting_for_its_e5_vector_keeps_its_first_stage_place(make_memory, monkeypatch):
    from indexer.sync import ranking_vectors
    monkeypatch.setattr(ranking_vectors, "FILL_ALL_UNDER", 0)
    mem = make_memory(global_notes=PAIRS, ranking_fill_s=0.0)
    first = mem.search("坐车时我有什么毛病？", explain=True, limit=6, bump=False)
    st = mem.stores("global")[0]
    ranking_vectors.bind(st)
    with db.transaction(st.con):  # every text but the first hit's gets its vector
        sql.put_e5(st.con, {sql.chunks_by_ids(st.con, [h.id])[0]["content_hash"]: ranking_model.passages([h.content])[0]
                            for h in first[1:]})
    after = mem.search("坐车时我有什么毛病？", explain=True, limit=6, bump=False)
    waiting = after[0]
    assert waiting.id == first[0].id  # on top of the pool's min-max scale, as in the first stage
    assert "e5_cosine" not in waiting.explain and all("e5_cosine" in h.explain for h in after if h is not waiting)



def test_status_says_how_many_texts_wait_for_the_ranking_model_after_a_big_build(tmp_path):
    from cli_process import mdmem
    from conftest import write_notes
    from indexer.sync.ranking_vectors import FILL_ALL_UNDER
    home = tmp_path / "home"
    many = FILL_ALL_UNDER + 20
    write_notes(home, {"user/log.md": "".join(f"- 2026-01-{i % 28 + 1:02d}: walked {i} km by the river\n"
                                               for i in range(many))})
    assert mdmem("--home", str(home), "index").returncode == 0
    said = mdmem("--home", str(home), "status")
    # before: "up to date" alone, while every search ranked without the ranking model
    assert said.returncode == 0 and f"ranking model 0 of {many} texts" in said.stdout, said.stdout
    quiet = mdmem("--home", str(home), "status", env={"MDMEM_RERANK": "false"})
    assert "ranking model" not in quiet.stdout, quiet.stdout


def test_search_says_it_ranked_without_the_ranking_model_until_the_vectors_are_filled(tmp_path):
    import json
    from cli_process import mdmem
    from conftest import write_notes
    from indexer.sync.ranking_vectors import FILL_ALL_UNDER
    home = tmp_path / "home"
    write_notes(home, {"user/log.md": "".join(f"- 2026-01-{i % 28 + 1:02d}: walked {i} km by the river\n"
                                               for i in range(FILL_ALL_UNDER + 20))})
    assert mdmem("--home", str(home), "index").returncode == 0  # a big build: no ranking vectors yet
    said = mdmem("--home", str(home), "search", "walked by the river")
    # before: the same hits and nothing said, while none of them was re-scored by the ranking model
    assert said.returncode == 0 and said.stdout.count("log.md") == 10, said.stdout + said.stderr
    assert ("ranked without the ranking model for 10 of 10 hits" in said.stderr
            and "run `mdmem index` or keep the daemon running" in said.stderr), said.stderr
    answer = json.loads(mdmem("--home", str(home), "search", "walked by the river", "--json").stdout)
    assert answer["ranking_pending"] == 10 and all(r["ranking_pending"] for r in answer["results"])
    assert mdmem("--home", str(home), "index", env={"MDMEM_RANKING_FILL_S": "-1"}).returncode == 0  # fills them all
    after = mdmem("--home", str(home), "search", "walked by the river")
    assert after.returncode == 0 and "ranking model" not in after.stderr, after.stderr
    answer = json.loads(mdmem("--home", str(home), "search", "walked by the river", "--json").stdout)
    assert "ranking_pending" not in answer and not any("ranking_pending" in r for r in answer["results"])
