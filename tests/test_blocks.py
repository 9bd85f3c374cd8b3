"""The line scanner reads memory notes exactly as markdown-it does, and leaves every other shape to it."""

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from indexer.notes import blocks
from indexer.notes.chunker import parse_note
from indexer.notes.frontmatter import split_front_matter

pytestmark = pytest.mark.unit

_MD = MarkdownIt("commonmark").enable("table").disable("inline")
# the demo's memory notes (journals, decisions, patterns; English and Chinese), inside the repository so that a
# clone anywhere tests the same files
SAMPLES = sorted((Path(__file__).resolve().parents[1] / "memory_samples").rglob(".mdmem/**/*.md"))

SHAPES = [
    "---\ntype: fact\n---\n\n# Facts\n\n- 2026-03-02: one\n- 2026-03-03: two\n",
    "# Journal 2026-03-02\n\n- 09:15: slept badly\n  and woke at 3\n  - a sub item\n\n- 10:00: loose list item\n\n"
    "A paragraph between lists\nwith a second line.\n\n1. ordered one\n2) ordered two\n\n## Later ##\n\n- 2026-01-01: x\n"
    "lazy continuation line\n",
    "- 2026-01-01: a\n\n\n  indented after blanks belongs to a\n- 2026-01-02: b\n* star list\n+ plus list\n",
    "# T\n\n- 2025-01-01: 中文的记忆，后面还有一行\n  第二行\n\n    indented inside the item after a blank\n- 2025-01-02: x\n",
]
FALLBACK = ["```\ncode\n```\n", "> quote\n", "| a | b |\n|---|---|\n", "<div>\nx\n</div>\n", "para\n===\n",
            "- a\n---\n", "* * *\n", "text\n- item interrupting\n", "\tindented with a tab\n", "[ref]: http://x\n",
            "    code block\n", "- item\n one space in\n", "- item\n  ```\n  code\n  ```\n"]


def _trim(lines, s, e):
    while e - 1 > s and not lines[e - 1].strip():
        e -= 1  # markdown-it's ranges may end in blank lines; the chunker drops them
    return s, e


def _trimmed(found, lines):
    return [(b.kind, *_trim(lines, b.start, b.end), b.level, b.title, tuple(_trim(lines, s, e) for s, e in b.items))
            for b in found]


def _both(text):
    _fm, offset = split_front_matter(text)
    lines = text.split("\n")
    fast = blocks.scan(lines, offset)
    slow = blocks.from_tokens(_MD.parse("\n".join(lines[offset:])), offset)
    return fast, slow, lines


@pytest.mark.parametrize("text", SHAPES)
def test_scanner_gives_markdown_its_blocks(text):
    fast, slow, lines = _both(text)
    assert fast is not None
    assert _trimmed(fast, lines) == _trimmed(slow, lines)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_scanner_reads_the_sample_notes_as_markdown_it_does(path):
    fast, slow, lines = _both(path.read_text(encoding="utf-8"))
    assert fast is None or _trimmed(fast, lines) == _trimmed(slow, lines)


def test_the_scanner_reads_most_sample_notes_itself():
    # 13 of the 21 are plain dated lists; the rest hold shapes left to markdown-it (fenced code, paragraphs)
    read = [p for p in SAMPLES if _both(p.read_text(encoding="utf-8"))[0] is not None]
    assert len(SAMPLES) >= 20 and len(read) >= 12


@pytest.mark.parametrize("text", FALLBACK)
def test_scanner_leaves_other_shapes_to_markdown_it(text):
    assert blocks.scan(text.split("\n"), 0) is None


def test_documents_keep_markdown_its_chunks_even_when_the_scanner_could_read_them():
    doc = "# Plan\n\n- buy flour\n- buy eggs\n\nThen bake the cake for forty minutes at 180 degrees.\n"
    note = parse_note(doc, "notes/plan.md")
    assert [c.kind for c in note.chunks] == ["section"] and note.chunks[0].start_line == 1
