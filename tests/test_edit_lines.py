"""Replacing and removing line ranges of a note: bytes kept, stale ranges refused, an editor's saves never lost."""

import os
import threading
import time

import pytest

from indexer.errors import ConflictError, NoteError
from indexer.notes.edit_lines import LineEdit, apply_edits, edit_lines, note_target

pytestmark = pytest.mark.unit

NOTE = "# Facts\n\n- 2025-01-05: one\n- 2025-01-06: two\n- 2025-01-07: three"


@pytest.mark.parametrize("nl,bom", [("\n", ""), ("\r\n", ""), ("\n", "\ufeff")])
def test_edits_keep_every_other_byte(nl, bom):
    data = (bom + NOTE.replace("\n", nl)).encode()
    out = apply_edits("n.md", data, [LineEdit(4, 4, "- 2025-01-06: two", "- 2025-01-06: deux\n  more"),
                                     LineEdit(5, 5, "- 2025-01-07: three", None)])
    assert out == (bom + "# Facts\n\n- 2025-01-05: one\n- 2025-01-06: deux\n  more\n").replace("\n", nl).encode()


def test_a_range_that_changed_or_vanished_is_refused():
    data = NOTE.encode()
    with pytest.raises(ConflictError, match="changed since"):
        apply_edits("n.md", data, [LineEdit(3, 3, "- 2025-01-05: uno", None)])
    with pytest.raises(ConflictError, match="shorter"):
        apply_edits("n.md", data, [LineEdit(9, 9, "x", None)])
    with pytest.raises(ConflictError, match="no longer exists"):
        apply_edits("n.md", None, [LineEdit(1, 1, "x", None)])
    with pytest.raises(NoteError, match="UTF-16"):
        apply_edits("n.md", "\ufeffx".encode("utf-16"), [LineEdit(1, 1, "x", None)])


def test_overlapping_edits_are_refused(tmp_path):
    (tmp_path / "n.md").write_text(NOTE)
    with pytest.raises(NoteError, match="overlap"):
        edit_lines(note_target("global", tmp_path, "n.md"), [LineEdit(3, 4, "", None), LineEdit(4, 5, "", None)])


def test_an_editor_saving_all_the_while_loses_nothing(tmp_path):
    path = tmp_path / "n.md"
    path.write_text(NOTE + "\n")
    stop = threading.Event()
    written = []

    def editor():  # read, add a line, save through a temp file and a rename, as editors do
        i = 0
        while not stop.is_set() and i < 400:
            text = path.read_text()
            tmp = tmp_path / f".n.md.{i}.swp"
            tmp.write_text(text + f"- editor line {i}\n")
            os.replace(tmp, path)
            written.append(i)
            i += 1
            time.sleep(0.02)  # 50 saves a second: far quicker than a person, even with autosave

    t = threading.Thread(target=editor)
    t.start()
    try:
        for n in range(20):
            for _ in range(20):  # the caller's side of a refusal: read the line again and retry
                old = path.read_text().split("\n")[2]  # the editor may have saved over our last edit
                try:
                    edit_lines(note_target("global", tmp_path, "n.md"), [LineEdit(3, 3, old, f"- 2025-01-05: one v{n}")])
                    break
                except ConflictError:
                    continue
    finally:
        stop.set()
        t.join()
    final = path.read_text()
    # the editor's own read-modify-write may drop our edit, never the other way round
    assert all(f"- editor line {i}\n" in final for i in written), final[-300:]
    assert final.startswith("# Facts\n\n- 2025-01-05: one")
