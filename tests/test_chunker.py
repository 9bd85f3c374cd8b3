"""Chunker: heading breadcrumbs, exact line ranges, merging and CJK-aware splitting."""

import pytest

from indexer.notes.chunker import parse_note
from indexer.notes.textseg import count_tokens

pytestmark = pytest.mark.unit


def lines_of(text, chunk):
    return "\n".join(text.split("\n")[chunk.start_line - 1: chunk.end_line])


def test_line_ranges_point_at_exactly_the_chunk_text():
    text = ("---\ntype: decision\nimportance: 5\ntags: [db, ops]\n---\n# Database\n\nWe use SQLite in WAL mode for the index.\n\n"
            "## Locks\n\n- busy_timeout is ten seconds\n- one writer thread per store\n\n```sql\nPRAGMA journal_mode=WAL;\n```\n\n"
            "## 中文\n\n数据库锁的问题在周二解决了。下周再观察一次。\n")
    note = parse_note(text, "agent/db.md")
    assert note.type == "decision" and note.importance == 5 and note.tags == ("db", "ops")
    for ch in note.chunks:
        assert lines_of(text, ch).strip() == ch.content.strip()
        assert 1 <= ch.start_line <= ch.end_line
    sections = [c.section for c in note.chunks]
    assert any(s.startswith("Database") for s in sections)
    assert any("中文" in s for s in sections)


def test_breadcrumb_follows_heading_levels():
    text = "# A\n\n" + "intro paragraph with enough words in it. " * 3 + "\n\n## B\n\n" + "body text for section b here. " * 40 + "\n\n### C\n\n" + "深入的细节内容在这里展开说明。" * 30 + "\n"
    note = parse_note(text, "n.md", target_tokens=60, max_tokens=120)
    assert "A > B > C" in [c.section for c in note.chunks]


def test_long_chinese_paragraph_splits_at_sentence_ends_within_limit():
    # distinct sentences: identical parts of one line would share an id and be kept once
    text = "# 会议\n\n" + "".join(f"今天我们讨论了数据库迁移的方案{i}，并确定了回滚步骤。" for i in range(60)) + "\n"
    note = parse_note(text, "journal/2026-01-01.md", target_tokens=100, max_tokens=150)
    assert len(note.chunks) > 3
    for ch in note.chunks:
        assert count_tokens(ch.content) <= 150 + 10
        assert ch.content.rstrip().endswith(("。", "会议"))
    assert note.type == "episodic"


def test_small_blocks_merge_and_headings_do_not_stand_alone():
    text = "# Title\n\nshort.\n\n## Next\n\nAnother short line.\n\n## Empty heading\n"
    note = parse_note(text, "x.md")
    assert len(note.chunks) == 1
    assert note.chunks[0].start_line == 1


def test_crlf_and_bom_give_the_same_chunks_as_lf():
    text = "# T\n\n第一段内容比较长一些，超过二十个字符了吧。\n\n第二段 English words here too.\n"
    a = parse_note(text, "a.md")
    b = parse_note("\ufeff" + text.replace("\n", "\r\n"), "a.md")
    assert [c.content for c in a.chunks] == [c.content for c in b.chunks]
    assert [(c.start_line, c.end_line) for c in a.chunks] == [(c.start_line, c.end_line) for c in b.chunks]


def test_bad_front_matter_is_a_warning_not_a_failure():
    note = parse_note("---\nimportance: [unclosed\n---\n# Still indexed\n\nThe body survives bad YAML.\n", "user/x.md")
    assert note.chunks and note.warnings
    assert note.type == "preference" and note.evergreen


def test_empty_and_whitespace_notes_have_no_chunks():
    assert parse_note("", "e.md").chunks == ()
    assert parse_note("\n\n   \n", "e.md").chunks == ()


def test_block_ending_in_a_colon_stays_with_the_list_it_introduces():
    item = "迁移脚本在执行之前会先隐式提交，所以整个迁移根本不在一个事务里，后面的失败也回滚不了。"
    text = "## 根本原因\n\n根本原因有两个：\n\n1. " + item * 3 + "\n2. " + item * 3 + "\n"
    note = parse_note(text, "journal/x.md", target_tokens=120, max_tokens=400)
    assert len(note.chunks) == 1 and "1. " in note.chunks[0].content


def test_a_lead_in_ending_in_a_colon_stays_with_the_numbered_list_of_a_memory_note():
    # a journal day (a memory note: its list items are records) whose section explains something in a numbered list
    text = ("---\ntype: episodic\n---\n# 2026-10-21 事故\n\n## Timeline\n\n- 10:12 deploy starts.\n- 10:14 the backfill fails.\n\n"
            "## Root cause\n\n根本原因有两个，叠加在一起才出事：\n\n1. 迁移脚本不在一个事务里。\n2. 每个 worker 各自执行迁移。\n\n"
            "## Why\n\nThe causes were two:\n\n1. No transaction.\n2. No lock.\n")
    note = parse_note(text, "journal/2026-10-21.md")
    for lead, answer in (("根本原因有两个", "各自执行迁移"), ("The causes were two:", "No lock.")):
        holding = [c for c in note.chunks if answer in c.content]
        assert len(holding) == 1 and lead in holding[0].content and "1. " in holding[0].content
        assert not [c for c in note.chunks if lead in c.content and answer not in c.content]
    assert [c.kind for c in note.chunks if "10:14" in c.content] == ["memory"]  # the dated items stay records
