"""Ranking models behind one list: each scores a question against passages (higher is better), loaded once per holder."""

from __future__ import annotations

import importlib
import math
import os
import threading
import time
from typing import Protocol

from indexer.errors import ConfigError, ProviderError, ProviderUnavailable

# The stage's models besides e5 (the bundled one ranks from vectors stored per chunk text, retrieval/ranking_stage)
# and none; each "module:Class" is imported only when chosen, so a missing library fails only its own choice.
RANKERS = {
    "cross-encoder": "indexer.providers.st_cross_encoder:CrossEncoderRanker",
    "embedder": "indexer.providers.embedder_ranker:EmbedderRanker",
    "rerank": "indexer.providers.rerank_api:RerankRanker",
}

# A server that did not answer is not asked again for this long: each search would otherwise wait out the
# deadline and retries (90 s by default) before it answers from the first stage.
REST_S = 60.0


class Ranker(Protocol):
    model_id: str

    def score(self, query: str, passages: list[str]) -> list[float]: ...


def settings(cfg) -> tuple:
    """What makes one ranker differ from another (the key of the loaded one; home: where its usage is logged)."""
    return (cfg.ranker, cfg.ranker_model, cfg.ranker_base_url, cfg.ranker_api_key_env, cfg.ranker_batch,
            cfg.ranker_timeout_s, cfg.ranker_max_retries, cfg.device, str(cfg.home))


class Rankers:
    """The configured ranking models loaded by one holder (a `Memory`, or the daemon's one for every request),
    each loaded once, and the servers that did not answer, resting."""

    def __init__(self):
        self._lock = threading.Lock()
        self._loaded: dict = {}  # settings -> the loaded ranker, or the error its load raised: loaded once
        self._resting: dict = {}  # settings -> (monotonic time until which the ranker is not asked, why)

    def load(self, cfg) -> Ranker:
        """The configured ranker, loaded once by this holder; ProviderError (or ConfigError) when it cannot load,
        raised again on every later call without another try (a model that failed to load fails the same way)."""
        key = settings(cfg)
        with self._lock:
            if key not in self._loaded:
                try:
                    self._loaded[key] = _make(cfg)
                except (ProviderError, ConfigError) as exc:
                    self._loaded[key] = exc
            found = self._loaded[key]
        if isinstance(found, Exception):
            raise found
        return found

    def score(self, cfg, query: str, passages: list[str]) -> list[float]:
        """The configured ranker's score of each passage; ProviderError (with why) when it cannot give them all:
        it failed to load, refused, answered nonsense, or did not answer (then it rests REST_S seconds)."""
        key = settings(cfg)
        with self._lock:
            until, why = self._resting.get(key, (0.0, ""))
        if time.monotonic() < until:
            raise ProviderUnavailable(f"{why} (not asked again for {until - time.monotonic():.0f} s)")
        ranker = self.load(cfg)
        try:
            out = [float(x) for x in ranker.score(query, passages)]
        except ProviderUnavailable as exc:
            with self._lock:
                self._resting[key] = (time.monotonic() + REST_S, str(exc))
            raise
        if len(out) != len(passages) or not all(math.isfinite(x) for x in out):
            raise ProviderError(f"ranker {ranker.model_id} gave {len(out)} scores for {len(passages)} passages, "
                                "or one that is not a number; check the model")
        return out


def _make(cfg) -> Ranker:
    where = RANKERS.get(cfg.ranker)
    if where is None:
        raise ConfigError(f"ranker {cfg.ranker!r} has no model to load; choose one of {', '.join(RANKERS)}")
    module, name = where.split(":")
    return getattr(importlib.import_module(module), name)(cfg)


def api_key(env_name: str, provider: str) -> dict:
    """The Authorization header for a key read from the named environment variable ({} when none is named)."""
    if not env_name:
        return {}
    key = os.environ.get(env_name, "").strip()
    if not key:
        raise ProviderError(f"{provider}: the environment variable {env_name} is empty or unset; "
                            f"export {env_name}=<your key> where mdmem runs")
    return {"Authorization": f"Bearer {key}"}


def counted_tokens(answer: dict | None) -> int:
    """The tokens an answer says it used (usage.total_tokens, or Ollama's prompt and answer counts); 0 if none."""
    if not isinstance(answer, dict):
        return 0
    counted = answer.get("usage")
    try:
        if isinstance(counted, dict):
            return int(counted.get("total_tokens") or 0)
        return int(answer.get("prompt_eval_count") or 0) + int(answer.get("eval_count") or 0)
    except (TypeError, ValueError):
        return 0
