"""A memory's metadata line: written visibly under its item, read back as given, left out of vectors and recall."""

from __future__ import annotations

import pytest

from indexer.errors import InputError
from indexer.notes import item_metadata
from indexer.notes.memory_items import text_to_embed

JOURNAL = """---
type: episodic
---

# Journal 2026-11-25

- 02:01: **Mira:** I'm allergic to moonpetal tea.
  - metadata: {"chat": "Seraphina - 2026-11-25@02h01m.jsonl", "turn": 3}
- 02:02: **Flux the Cat:** I will keep moonpetal away from you.
  - metadata: chat=Seraphina.jsonl, time=02:02
- 02:03: **user:** 我喜欢在山谷里泡温泉。
"""


@pytest.mark.unit
def test_the_line_round_trips_any_json_object_and_reads_a_hand_written_form():
    meta = {"chat": "Alice.jsonl", "n": 3, "ok": True, "nested": {"a": [1, 2]}, "角色": "塞拉菲娜"}
    item = "- 14:03: **user:** I like tea\n  " + item_metadata.line_of(meta)
    assert item_metadata.split(item) == ("- 14:03: **user:** I like tea", meta)
    assert item_metadata.split("- x\n  - metadata: chat=A.jsonl, time=12:00")[1] == {"chat": "A.jsonl",
                                                                                     "time": "12:00"}
    assert item_metadata.split("- x\n  - metadata: just words")[1] == {"text": "just words"}  # kept, not dropped
    assert item_metadata.split("- metadata: a top-level item is a memory")[1] is None
    with pytest.raises(InputError, match="JSON object"):
        item_metadata.checked(["chat"])
    with pytest.raises(InputError, match="under 2000"):
        item_metadata.checked({"blob": "x" * 3000})


@pytest.mark.unit
def test_metadata_is_not_embedded_with_the_memory():
    plain = "- 02:01: **Mira:** I'm allergic to moonpetal tea."
    assert text_to_embed(plain + '\n  - metadata: {"chat": "a.jsonl"}', "memory") == text_to_embed(plain, "memory")


def test_notes_with_metadata_index_rebuild_verify_and_recall_with_speakers(make_memory):
    mem = make_memory({"spaces/Seraphina/journal/2026-11-25.md": JOURNAL})
    hit = mem.search("moonpetal allergy", space="Seraphina", limit=1)[0]
    assert hit.kind == "memory" and (hit.start_line, hit.end_line) == (7, 8)  # the item and its metadata line
    mem.rebuild()
    again = mem.get(mem.search("moonpetal allergy", space="Seraphina", limit=1)[0].id, space="Seraphina")
    assert item_metadata.split(again["text"])[1] == {"chat": "Seraphina - 2026-11-25@02h01m.jsonl", "turn": 3}
    assert all(r.ok for r in mem.verify())
    block = mem.recall("what is Mira allergic to", space="Seraphina")["text"]
    assert "Mira: I'm allergic to moonpetal tea." in block  # who said it stays in what recall shows
    assert "metadata" not in block and "jsonl" not in block
    block = mem.recall("温泉", space="Seraphina")["text"]
    assert "user: 我喜欢在山谷里泡温泉。" in block
