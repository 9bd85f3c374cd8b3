"""Ollama's /api/embed: a list of texts in, a list of vectors out; local, no key."""

from __future__ import annotations

from indexer.errors import ProviderError
from indexer.providers.remote import RemoteEmbedder


class OllamaEmbedder(RemoteEmbedder):
    provider = "ollama"
    default_url = "http://localhost:11434"
    default_model = "nomic-embed-text"
    default_key_env = ""
    adds_prompts = True
    max_batch = 512

    def request(self, texts, kind):
        body = {"model": self.model, "input": texts}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        key = self._key()  # a proxy in front of Ollama may want one
        return f"{self.base_url}/api/embed", body, ({"Authorization": f"Bearer {key}"} if key else {})

    def read(self, answer):
        vectors = answer.get("embeddings")
        if not isinstance(vectors, list):
            raise ProviderError("ollama answered without embeddings; check base_url and that the model is pulled "
                                f"(`ollama pull {self.model}`)")
        return vectors, int(answer.get("prompt_eval_count") or 0)
