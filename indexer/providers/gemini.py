"""Google's Gemini API: batchEmbedContents with a retrieval task type per side (documents, queries)."""

from __future__ import annotations

from indexer.errors import ProviderError
from indexer.providers.remote import RemoteEmbedder

TASKS = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(RemoteEmbedder):
    provider = "gemini"
    default_url = "https://generativelanguage.googleapis.com"
    default_model = "gemini-embedding-001"
    default_key_env = "GEMINI_API_KEY"
    key_required = True
    max_batch = 100  # the API's limit per batchEmbedContents

    def prompts(self):
        return "taskType RETRIEVAL_DOCUMENT/RETRIEVAL_QUERY"

    def request(self, texts, kind):
        name = self.model if self.model.startswith("models/") else f"models/{self.model}"
        one = {"model": name, "taskType": TASKS[kind]}
        if self.dimensions:
            one["outputDimensionality"] = self.dimensions
        body = {"requests": [{**one, "content": {"parts": [{"text": t}]}} for t in texts]}
        return f"{self.base_url}/v1beta/{name}:batchEmbedContents", body, {"x-goog-api-key": self._key()}

    def read(self, answer):
        items = answer.get("embeddings")
        if not isinstance(items, list) or not all(isinstance(e, dict) and "values" in e for e in items):
            raise ProviderError("gemini answered without embeddings[].values; check base_url and the model name")
        return [e["values"] for e in items], 0
