"""OpenAI and every OpenAI-compatible /v1/embeddings server (LM Studio, vLLM, llama.cpp, Infinity, TEI)."""

from __future__ import annotations

from indexer.providers.remote import RemoteEmbedder, data_vectors


class OpenAIEmbedder(RemoteEmbedder):
    provider = "openai"
    default_url = "https://api.openai.com/v1"
    default_model = "text-embedding-3-small"
    default_key_env = "OPENAI_API_KEY"
    adds_prompts = True
    max_batch = 2048

    def request(self, texts, kind):
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        key = self._key()
        return f"{self.base_url}/embeddings", body, ({"Authorization": f"Bearer {key}"} if key else {})

    def read(self, answer):
        used = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        return data_vectors(answer, self.provider), int(used.get("prompt_tokens") or used.get("total_tokens") or 0)
