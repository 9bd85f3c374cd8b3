"""Voyage AI's /v1/embeddings: OpenAI's shape with input_type (document, query) and output_dimension."""

from __future__ import annotations

from indexer.providers.remote import RemoteEmbedder, data_vectors


class VoyageEmbedder(RemoteEmbedder):
    provider = "voyage"
    default_url = "https://api.voyageai.com/v1"
    default_model = "voyage-3.5"
    default_key_env = "VOYAGE_API_KEY"
    key_required = True
    max_batch = 1000

    def prompts(self):
        return "input_type document/query"

    def request(self, texts, kind):
        body = {"model": self.model, "input": texts, "input_type": kind}
        if self.dimensions:
            body["output_dimension"] = self.dimensions
        return f"{self.base_url}/embeddings", body, {"Authorization": f"Bearer {self._key()}"}

    def read(self, answer):
        used = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        return data_vectors(answer, self.provider), int(used.get("total_tokens") or 0)
