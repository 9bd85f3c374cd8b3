"""A sentence-transformers CrossEncoder (any reranker, e.g. bge-reranker-v2-m3) as the ranking model."""

from __future__ import annotations

import os
import threading
import warnings

from indexer.errors import ProviderError


class CrossEncoderRanker:
    """Reads each (question, passage) pair whole; a folder, or a hub name already in the local cache: a search
    never downloads (a reranker is 0.1-2 GB)."""

    def __init__(self, cfg):
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise ProviderError("ranker cross-encoder needs sentence-transformers; "
                                "run `pip install sentence-transformers`") from exc
        name = cfg.ranker_model
        folder = os.path.isdir(os.path.expanduser(name))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = CrossEncoder(os.path.expanduser(name) if folder else name,
                                           device=None if cfg.device == "auto" else cfg.device,
                                           local_files_only=not folder)
        except Exception as exc:  # the library raises many kinds; all mean "cannot load"
            raise ProviderError(f"ranker cross-encoder cannot load {name!r} ({type(exc).__name__}); give a model "
                                "folder as ranker_model, or download the hub model first "
                                f"(`huggingface-cli download {name}`)") from None
        self.model_id = f"cross-encoder:{os.path.basename(os.path.normpath(name)) or name}"
        self.batch = cfg.ranker_batch
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses every core

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            out = self._model.predict([(query, p) for p in passages], batch_size=self.batch,
                                      show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in out.reshape(len(passages), -1)[:, -1]]
