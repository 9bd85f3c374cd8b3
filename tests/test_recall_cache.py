"""The ranking model's background vectors are kept in the home's .cache/: a later process reads them, never stale ones."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from cli_process import mdmem
from indexer import ranking_model
from indexer.retrieval import hubness, relevance
from test_recall_focus import NOTES

TEXTS = ("The Danube flows into the Black Sea.", "黄河是中国第二长的河流。")


@pytest.fixture
def fresh(monkeypatch):
    """A new process as far as background() knows (the loaded models kept), counting what the model embeds."""
    assert ranking_model.load("query") is not None, ranking_model.load_error()
    ranking_model.load("passage")
    calls = []
    real_passages, real_questions = ranking_model.passages, ranking_model._questions

    def restart():
        kept = {k: v for k, v in ranking_model._state.items() if not (isinstance(k, tuple) and k[0] == "background")}
        monkeypatch.setattr(ranking_model, "_state", kept)
        calls.clear()

    monkeypatch.setattr(ranking_model, "passages", lambda texts: calls.append(tuple(texts)) or real_passages(texts))
    monkeypatch.setattr(ranking_model, "_questions", lambda texts: calls.append(tuple(texts)) or real_questions(texts))
    restart()
    return restart, calls


def _files(home):
    return sorted((home / ranking_model.CACHE_DIR).glob("*.npy")) if (home / ranking_model.CACHE_DIR).is_dir() else []


def test_a_second_process_reads_the_kept_vectors(tmp_path, fresh):
    restart, calls = fresh
    home = tmp_path / "home"
    home.mkdir()
    first = ranking_model.background(TEXTS, home=home)
    assert calls == [TEXTS]
    [kept] = _files(home)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE((home / ranking_model.CACHE_DIR).stat().st_mode) == 0o700
    restart()
    again = ranking_model.background(TEXTS, home=home)
    assert calls == [] and np.array_equal(first, again)  # read, not embedded again
    assert [p.name for p in (home / ranking_model.CACHE_DIR).iterdir()] == [kept.name]  # no temp file left behind


def test_a_notes_folder_used_as_the_home_shows_no_new_folder(tmp_path, fresh):
    home = tmp_path / "vault"
    (home / "daily").mkdir(parents=True)
    (home / "daily" / "2026-11-27.md").write_text("- I drink green tea\n", encoding="utf-8")
    ranking_model.background(TEXTS, home=home)
    ranking_model.background(TEXTS, role="query", home=home)
    assert len(_files(home)) == 2
    # what a vault's file tree shows (and the watcher reports): the notes' folders as they were
    assert sorted(p.name for p in home.iterdir() if not p.name.startswith(".")) == ["daily"]


def test_a_damaged_file_is_computed_again_and_replaced(tmp_path, fresh):
    restart, calls = fresh
    home = tmp_path / "home"
    home.mkdir()
    good = ranking_model.background(TEXTS, role="query", home=home)
    [kept] = _files(home)
    whole = kept.read_bytes()
    foreign = tmp_path / "foreign.npy"
    np.save(foreign, np.ones((len(TEXTS), 384), dtype=np.float64))  # the right shape in another dtype
    for damaged in (whole[: len(whole) // 2], b"not a numpy file", foreign.read_bytes(), b""):
        kept.write_bytes(damaged)
        restart()
        got = ranking_model.background(TEXTS, role="query", home=home)
        assert calls == [TEXTS] and np.allclose(got, good, atol=1e-6)
        assert kept.read_bytes() == whole  # replaced by what the model made
    kept.unlink()
    (home / ranking_model.CACHE_DIR).rmdir()
    (home / ranking_model.CACHE_DIR).write_text("")  # a cache folder that cannot be made: computed, never an error
    restart()
    assert np.allclose(ranking_model.background(TEXTS, role="query", home=home), good, atol=1e-6) and calls == [TEXTS]


def test_other_texts_or_another_role_get_a_file_of_their_own(tmp_path, fresh):
    restart, calls = fresh
    home = tmp_path / "home"
    home.mkdir()
    ranking_model.background(TEXTS, home=home)
    ranking_model.background(TEXTS[:1], home=home)
    ranking_model.background(TEXTS, role="query", home=home)
    assert len(_files(home)) == 3
    restart()
    one = ranking_model.background(TEXTS[:1], home=home)
    assert calls == [] and one.shape == (1, 384)
    missing = tmp_path / "no-home"  # nothing is made outside an existing home
    ranking_model.background(("Only here.",), home=missing)
    assert not missing.exists()


def test_recall_is_the_same_with_and_without_the_kept_vectors(make_memory, fresh):
    restart, calls = fresh
    mem = make_memory(NOTES)
    home = mem.cfg.home
    questions = ("How do I take my tea?", "我住在哪个城市？", "What is the tallest mountain in Africa?")
    made = [mem.recall(q) for q in questions]
    assert calls and {p.name.split("-")[1] for p in _files(home)} == {"passage", "query"}
    restart()
    read = [mem.recall(q) for q in questions]
    assert calls == [] and read == made
    assert any(m["memories"] for m in made) and any(not m["memories"] for m in made)
    # the daemon's ranking: what the cache holds, bit for bit what the model makes
    for texts, role in ((relevance.BACKGROUND, "passage"), (hubness.QUESTIONS_ZH, "query")):
        kept = ranking_model._read_cached(ranking_model._cache_file(home / ranking_model.CACHE_DIR, texts, role), len(texts))
        assert kept is not None and np.allclose(kept, ranking_model.passages(list(texts)) if role == "passage"
                                                else ranking_model._questions(list(texts)), atol=1e-6)


def test_a_one_shot_recall_keeps_its_vectors_for_the_next(tmp_path):
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    (home / "user" / "facts.md").write_text(NOTES["user/facts.md"])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    (tmp_path / "run").mkdir()
    assert mdmem("--home", str(home), "index", base_env=env, cwd=tmp_path).returncode == 0

    def recall():
        r = mdmem("--home", str(home), "recall", "How do I take my tea?", "--json", base_env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    first = recall()
    files = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in _files(home)}
    assert len(files) >= 2, files  # relevance's sentences and hubness's questions
    second = recall()
    # the second process read the files: one that computed them would have renamed new ones over them
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in _files(home)} == files
    assert second["memories"] == first["memories"] and "tea with lemon" in first["text"]
