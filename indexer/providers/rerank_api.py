"""A `/rerank` endpoint as the ranking model: the shape Cohere, Jina, Voyage, TEI and vLLM share."""

from __future__ import annotations

import time

from indexer.errors import ProviderError
from indexer.providers import usage
from indexer.providers.http_json import post_json
from indexer.providers.rankers import api_key, counted_tokens


class RerankRanker:
    """POST {base_url}/rerank {"model", "query", "documents", "top_n"} -> {"results": [{"index",
    "relevance_score"}]}; base_url carries the API's version (https://api.jina.ai/v1, http://localhost:8000/v1)."""

    def __init__(self, cfg):
        self.url = cfg.ranker_base_url.rstrip("/") + "/rerank"
        self.model = cfg.ranker_model
        self.model_id = f"rerank:{cfg.ranker_model or self.url}"
        self.key_env = cfg.ranker_api_key_env
        self.headers = api_key(cfg.ranker_api_key_env, "ranker rerank")
        self.batch = cfg.ranker_batch
        self.timeout_s, self.max_retries = cfg.ranker_timeout_s, cfg.ranker_max_retries
        self._usage = usage.UsageLog(cfg.home)

    def score(self, query: str, passages: list[str]) -> list[float]:
        out: list[float] = []
        for i in range(0, len(passages), self.batch):
            out += self._one(query, passages[i:i + self.batch])
        return out

    def _one(self, query: str, docs: list[str]) -> list[float]:
        body = {"query": query, "documents": docs, "top_n": len(docs), **({"model": self.model} if self.model else {})}
        start, got = time.monotonic(), None
        try:
            got = post_json(self.url, body, headers=self.headers, timeout_s=self.timeout_s,
                            max_retries=self.max_retries, provider="ranker rerank", key_env=self.key_env)
        finally:
            self._usage.record("rerank", self.model or self.url, "ranker", len(docs), counted_tokens(got),
                               time.monotonic() - start, got is not None)
        scores: list[float | None] = [None] * len(docs)
        results = got.get("results")
        try:
            for r in results:
                scores[int(r["index"])] = float(r["relevance_score"])
        except (TypeError, KeyError, ValueError, IndexError):
            raise ProviderError(f"ranker rerank at {self.url} answered without results[].index/relevance_score; "
                                "check base_url points at a /rerank API") from None
        if all(s is None for s in scores):
            raise ProviderError(f"ranker rerank at {self.url} scored none of {len(docs)} passages; "
                                "check base_url and model")
        low = min(s for s in scores if s is not None)
        return [low if s is None else s for s in scores]  # a server that cut the list ranks the rest lowest
