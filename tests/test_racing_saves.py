"""Saves that land while mdmem swaps a note: merged line by line, never an older text put back."""

from __future__ import annotations

import os

import pytest

from indexer.notes import append
from indexer.notes.append import Target, append_entry
from indexer.notes.merge_saves import merge_saves

BASE = b"# Journal\n\n- 2026-01-01: first\n- 2026-01-02: second\n"


@pytest.mark.parametrize("ours, theirs, want", [
    (BASE + b"- mine\n", b"# Journal\n\nedited above\n- 2026-01-01: first\n- 2026-01-02: second\n",
     b"# Journal\n\nedited above\n- 2026-01-01: first\n- 2026-01-02: second\n- mine\n"),
    (BASE + b"- mine\n", BASE + b"- theirs\n", BASE + b"- theirs\n- mine\n"),
    # they lack the line ours was appended after: it stays (an older text put back reads the same)
    (BASE + b"- mine\n", b"# Journal\n\n- 2026-01-01: first\n", BASE + b"- mine\n"),
    # we removed a line they changed: their change is kept (a line can be deleted again, not found again)
    (b"# Journal\n\n- 2026-01-01: first\n", b"# Journal\n\n- 2026-01-01: first\n- 2026-01-02: SECOND\n",
     b"# Journal\n\n- 2026-01-01: first\n- 2026-01-02: SECOND\n"),
    # both changed the same line differently: both kept, ours first
    (BASE.replace(b"first", b"one"), BASE.replace(b"first", b"uno"),
     b"# Journal\n\n- 2026-01-01: one\n- 2026-01-01: uno\n- 2026-01-02: second\n"),
])
def test_merge_keeps_both_sides_changes(ours, theirs, want):
    assert merge_saves(BASE, ours, theirs) == want


def test_merge_of_a_last_line_without_newline_does_not_repeat_it():
    base = b"- a\n- b"
    assert merge_saves(base, base + b"\n- mine\n", b"- new\n- a\n- b") == b"- new\n- a\n- b\n- mine\n"


def _racing(monkeypatch, path, saves):
    """Before each of the first len(saves) exchanges, another program saves its edit of what the note holds."""
    real, calls = append._exchange, []

    def exchange(a, b):
        if len(calls) < len(saves):
            now = path.read_bytes()
            tmp = path.with_name("other.tmp")
            tmp.write_bytes(saves[len(calls)](now))
            os.replace(tmp, path)  # the other program's save, whole
        calls.append(a)
        return real(a, b)
    monkeypatch.setattr(append, "_exchange", exchange)
    return calls


def _insert_after_title(line):
    return lambda data: data.replace(b"\n\n", b"\n\n" + line + b"\n", 1)


def test_a_save_between_our_look_and_our_swap_is_kept(tmp_path, monkeypatch):
    note = tmp_path / "j.md"
    note.write_bytes(BASE)
    _racing(monkeypatch, note, [_insert_after_title(b"editor line 0")])
    append_entry(Target("global", tmp_path, "j.md", note, "Journal"), "- 2026-01-03: mine\n", "")
    text = note.read_bytes()
    assert b"editor line 0" in text and text.count(b"- 2026-01-03: mine\n") == 1
    assert b"- 2026-01-02: second\n" in text


def test_a_save_built_on_ours_in_that_instant_keeps_the_one_before_it(tmp_path, monkeypatch):
    """The race the load-and-kill test lost 1 run in 12: an editor saved between our look and our swap,
    then saved again on top of our text in the instant it showed; putting its first save back and
    keeping the newest dropped 'editor line 0'."""
    note = tmp_path / "j.md"
    note.write_bytes(BASE)
    calls = _racing(monkeypatch, note, [_insert_after_title(b"editor line 0"), _insert_after_title(b"editor line 1")])
    append_entry(Target("global", tmp_path, "j.md", note, "Journal"), "- 2026-01-03: mine\n", "")
    text = note.read_bytes()
    assert len(calls) >= 2
    assert b"editor line 0" in text and b"editor line 1" in text, text
    assert text.count(b"- 2026-01-03: mine\n") == 1 and text.count(b"second") == 1
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_note_saved_at_every_swap_is_answered_busy_and_keeps_every_save(tmp_path, monkeypatch):
    """Busy, retry (exit 75, HTTP 503), never a refusal that reads as a failure; and no save dropped."""
    from indexer.errors import BusyError, NoteBusyError
    note = tmp_path / "j.md"
    note.write_bytes(BASE)
    saves = [_insert_after_title(b"editor line %d" % n) for n in range(10_000)]
    calls = _racing(monkeypatch, note, saves)
    with pytest.raises(NoteBusyError) as err:
        append_entry(Target("global", tmp_path, "j.md", note, "Journal"), "- 2026-01-03: mine\n", "")
    assert isinstance(err.value, BusyError) and err.value.exit_code == 75 and "retry" in str(err.value)
    aside = list(tmp_path.glob(".j.md.unmerged-*"))
    assert len(aside) == 1 and aside[0].name in str(err.value)
    text = note.read_bytes() + aside[0].read_bytes()
    assert len(calls) > append.SETTLE_ROUNDS
    assert all(b"editor line %d\n" % n in text for n in range(len(calls)))  # in the note or beside it


def test_a_full_disk_while_merging_puts_their_save_back(tmp_path, monkeypatch):
    note = tmp_path / "j.md"
    note.write_bytes(BASE)
    _racing(monkeypatch, note, [_insert_after_title(b"editor line 0")])
    real, writes = append._synced_temp, []

    def synced_temp(path, data):
        writes.append(data)
        if len(writes) == 2:  # the merge's temp file
            raise OSError(28, "No space left on device")
        return real(path, data)
    monkeypatch.setattr(append, "_synced_temp", synced_temp)
    with pytest.raises(Exception, match="disk full"):
        append_entry(Target("global", tmp_path, "j.md", note, "Journal"), "- 2026-01-03: mine\n", "")
    text = note.read_bytes()
    assert b"editor line 0" in text and b"mine" not in text  # theirs in place, ours not acknowledged
    assert not list(tmp_path.glob(".*.tmp")) and not list(tmp_path.glob(".*.unmerged-*"))
