"""What every embedder behind an HTTP API shares: batching, key lookup, dimension checks, usage records."""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from indexer.config import Config
from indexer.errors import ProviderError, ProviderUnavailable
from indexer.providers import usage
from indexer.providers.http_json import post_json

# Native sizes of models people configure most, so a store can be opened (and its vectors marked pending)
# while the provider is down; any other model is asked once, or takes `dimensions` from the config.
KNOWN_DIMS = (
    ("text-embedding-3-small", 1536), ("text-embedding-3-large", 3072), ("text-embedding-ada-002", 1536),
    ("nomic-embed-text", 768), ("embeddinggemma", 768), ("mxbai-embed-large", 1024), ("all-minilm", 384),
    ("bge-m3", 1024), ("snowflake-arctic-embed", 1024), ("gemini-embedding-001", 3072),
    ("text-embedding-004", 768), ("voyage-3.5", 1024), ("voyage-3.5-lite", 1024), ("voyage-3-large", 1024),
    ("voyage-3", 1024), ("voyage-3-lite", 512), ("voyage-multilingual-2", 1024),
)

# What a model was trained to see before a query and a document; servers behind OpenAI's and Ollama's APIs
# send the text as given, so the client adds them (Gemini and Voyage take a task type instead).
# (model name prefix, query prompt, document prompt)
KNOWN_PROMPTS = (
    ("embeddinggemma", "task: search result | query: ", "title: none | text: "),
    ("nomic-embed-text", "search_query: ", "search_document: "),
    ("multilingual-e5", "query: ", "passage: "), ("e5-", "query: ", "passage: "),
    ("mxbai-embed-large", "Represent this sentence for searching relevant passages: ", ""),
    ("snowflake-arctic-embed", "Represent this sentence for searching relevant passages: ", ""),
)


def known_prompts(model: str) -> tuple[str, str]:
    """(query prompt, document prompt) of a model named by its hub or server name, ("", "") if none."""
    base = model.rsplit("/", 1)[-1].split(":")[0].lower()
    return next(((q, d) for name, q, d in KNOWN_PROMPTS if base.startswith(name)), ("", ""))


class RemoteEmbedder:
    """An embedding API; subclasses say how a batch is asked for and how the answer is read."""

    provider = ""
    default_url = ""
    default_model = ""
    default_key_env = ""
    key_required = False  # a key is needed even on another base_url (hosted-only APIs)
    max_batch = 2048  # the API's own limit on texts per request
    adds_prompts = False  # the API sends text as given: the model's own prompts are added here

    def __init__(self, cfg: Config):
        self.model = cfg.embedder_model or self.default_model
        self.base_url = (cfg.embedder_base_url or self.default_url).rstrip("/")
        self.key_env = cfg.embedder_api_key_env or self.default_key_env
        self.batch = max(1, min(cfg.embed_batch, self.max_batch))
        self.timeout_s = cfg.embedder_timeout_s
        self.max_retries = cfg.embedder_max_retries
        self.dimensions = cfg.embedder_dimensions  # asked of the API; 0 = the model's own
        self.query_prompt, self.doc_prompt = known_prompts(self.model) if self.adds_prompts else ("", "")
        self._dim = self.dimensions or dict(KNOWN_DIMS).get(self.model.rsplit("/", 1)[-1].split(":")[0], 0)
        self._usage = usage.UsageLog(cfg.home)
        self._lock = threading.Lock()
        # a provider that did not answer is tried once, not max_retries + 1 times, until it answers again:
        # the daemon's filler already retries with backoff, and each full try (7.5 s of backoff against a
        # 503) held the daemon's writer, so notes saved during an outage waited that long for full text
        self._down = False
        self._once = threading.local()  # .on while try_documents runs in that thread
        self._key()  # a missing key is said at load, not at the first note

    # --- the Embedder protocol -------------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        if not self._dim:
            self._dim = self._call(["dimension probe"], "query").shape[1]
        return self._dim

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}:{self.dim}"

    @property
    def identity(self) -> dict:
        """What made the vectors, as the store records it (no URL, no key)."""
        return {"provider": self.provider, "model": self.model, "dimensions": self.dim, "prompts": self.prompts()}

    def prompts(self) -> str:
        if not (self.query_prompt or self.doc_prompt):
            return ""
        return f"query {self.query_prompt!r} document {self.doc_prompt!r}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = [self.doc_prompt + t for t in texts] if self.doc_prompt else texts
        parts = [self._call(texts[i:i + self.batch], "document") for i in range(0, len(texts), self.batch)]
        return np.concatenate(parts)

    def try_documents(self, texts: list[str]) -> np.ndarray:
        """embed_documents with one try per request and no wait: a save writes its text before any retry (the
        first save of an outage waited out 7.5 s of backoff before its note could be found by full text); the
        vectors of a try that fails wait for the filler, which retries with backoff."""
        self._once.on = True  # this thread's calls only: a search beside it keeps its retries
        try:
            return self.embed_documents(texts)
        finally:
            self._once.on = False

    def embed_query(self, text: str) -> np.ndarray:
        return self._call([self.query_prompt + text], "query")[0]

    # --- one request -----------------------------------------------------------------------------------------

    def _call(self, texts: list[str], kind: str) -> np.ndarray:
        url, body, headers = self.request(texts, kind)
        start = time.monotonic()
        ok = False
        tokens = 0
        try:
            once = self._down or getattr(self._once, "on", False)
            answer = post_json(url, body, headers=headers, timeout_s=self.timeout_s,
                               max_retries=0 if once else self.max_retries, provider=self.provider,
                               key_env=self.key_env)
            vectors, tokens = self.read(answer)
            ok = True
        except ProviderUnavailable:
            self._down = True
            raise
        finally:
            if ok:
                self._down = False
            self._usage.record(self.provider, self.model, "embed", len(texts), tokens, time.monotonic() - start, ok)
        return self._checked(vectors, len(texts))

    def _checked(self, vectors, count: int) -> np.ndarray:
        try:
            v = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError):
            v = np.zeros(0)
        if v.ndim != 2 or v.shape[0] != count or not v.shape[1] or not np.all(np.isfinite(v)):
            raise ProviderError(f"{self.provider} model {self.model} answered {v.shape[0] if v.ndim else 0} "
                                f"vector(s) of an unexpected shape for {count} text(s); check the model is an "
                                "embedding model")
        with self._lock:
            if not self._dim:
                self._dim = v.shape[1]
        if v.shape[1] != self._dim:
            raise ProviderError(f"{self.provider} model {self.model} answered {v.shape[1]}-dimensional vectors, "
                                f"expected {self._dim}; set dimensions = {v.shape[1]} in [embedder] or run "
                                f"`mdmem rebuild --embedder {self.provider}`")
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(norms == 0, 1.0, norms)  # Matryoshka cuts (Gemini below 3072) come unnormalised

    def _key(self) -> str:
        key = os.environ.get(self.key_env, "") if self.key_env else ""
        if not key and self.key_env and (self.key_required or self.base_url == self.default_url.rstrip("/")):
            raise ProviderError(f"{self.provider} needs an API key: export {self.key_env}=… (or name another "
                                "variable with api_key_env in [embedder])")
        return key

    # --- what a provider fills in ----------------------------------------------------------------------------

    def request(self, texts: list[str], kind: str) -> tuple[str, dict, dict]:
        raise NotImplementedError

    def read(self, answer: dict) -> tuple[list, int]:
        """The vectors in request order and the tokens the API counted (0 when it does not say)."""
        raise NotImplementedError


def data_vectors(answer: dict, provider: str) -> list:
    """OpenAI's shape (Voyage shares it): data[i].embedding, put back in index order."""
    data = answer.get("data")
    if not isinstance(data, list) or not all(isinstance(d, dict) and "embedding" in d for d in data):
        raise ProviderError(f"{provider} answered without data[].embedding; check base_url is an embeddings API")
    return [d["embedding"] for d in sorted(data, key=lambda d: d.get("index", 0))]
