"""The memory browser's type and note filters on real stores: read in SQL before the limit (memories) and
widened until enough hits are of the type asked for (search), so an old or low-ranked memory is still found."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from indexer.daemon import review_api, ui_api
from indexer.daemon.mem0_api import MAX_TOP_K, OVERFETCH
from indexer.errors import ArgumentError

NEWER = MAX_TOP_K + 5  # more memories than the list may read, all newer than the one asked for


def _facts(count: int, first: date) -> str:
    return "---\ntype: fact\n---\n\n" + "".join(
        f"- {(first + timedelta(days=i)).isoformat()}: the shed holds crate number {i}\n" for i in range(count))


def test_an_old_memory_of_a_rare_type_or_note_is_listed_behind_a_thousand_newer_ones(make_memory, none_embedder):
    mem = make_memory(global_notes={
        "user/shed.md": _facts(NEWER, date(2021, 1, 1)),
        "user/rare.md": "---\ntype: preference\n---\n\n- 2020-06-01: I prefer the old wooden ladder\n"},
        embedder=none_embedder)
    only = ui_api.memories(mem, {"type": "preference"})["results"]
    assert [m["text"] for m in only] == ["- 2020-06-01: I prefer the old wooden ladder"]
    assert [m["uri"] for m in ui_api.memories(mem, {"note": "rare.md"})["results"]] == ["user/rare.md"]
    assert mem.recent(type="preference", note="user/") == only
    assert ui_api.memories(mem, {"type": "preference", "note": "shed"})["results"] == []
    newest = ui_api.memories(mem, {"type": "fact", "note": "shed.md", "limit": 3})["results"]
    last = date(2021, 1, 1) + timedelta(days=NEWER - 1)
    assert [m["date"] for m in newest] == [(last - timedelta(days=n)).isoformat() for n in range(3)]
    with pytest.raises(ArgumentError, match="type must be one of"):
        ui_api.memories(mem, {"type": "poem"})
    with pytest.raises(ArgumentError, match="type must be one of"):
        mem.recent(type="poem")


def test_search_of_a_rare_type_returns_as_many_as_asked_when_they_rank_below_the_first_reads(make_memory,
                                                                                            none_embedder):
    facts = "---\ntype: fact\n---\n\n" + "".join(f"- green tea, tea, tea number {i}\n" for i in range(30))
    liked = "---\ntype: preference\n---\n\n" + "".join(
        f"- on slow sunday mornings in the garden with a book and the radio I sometimes drink tea, item {i}\n"
        for i in range(3))
    mem = make_memory(global_notes={"user/tea.md": facts, "user/liked.md": liked}, embedder=none_embedder)
    every = ui_api.search(mem, {"query": "tea", "limit": 40})["results"]
    assert [h["type"] for h in every[:OVERFETCH * 2]] == ["fact"] * (OVERFETCH * 2)
    got = ui_api.search(mem, {"query": "tea", "type": "preference", "limit": 2})["results"]
    assert [h["type"] for h in got] == ["preference", "preference"]
    assert len(ui_api.search(mem, {"query": "tea", "type": "preference", "limit": 10})["results"]) == 3
    assert ui_api.search(mem, {"query": "tea", "type": "decision", "limit": 5})["results"] == []


def test_the_pages_bad_arguments_are_argument_errors_named_as_sent(make_memory, none_embedder, tmp_path):
    mem = make_memory(embedder=none_embedder)
    for call, body, words in (
            (ui_api.memories, {"store": "elsewhere"}, "store must be one of global, project, all"),
            (ui_api.memories, {"space": 3}, "space must be a string"),
            (ui_api.search, {"query": " "}, "query is empty"),
            (ui_api.search, {"query": "tea", "type": "poem"}, "type must be one of"),
            (ui_api.import_path, {"path": "relative.json"}, "path must be absolute"),
            (ui_api.import_path, {"path": str(tmp_path / "none.json")}, "path does not exist"),
            (ui_api.import_path, {"path": str(tmp_path), "format": "csv"}, "format must be one of"),
            (ui_api.import_path, {"path": str(tmp_path), "dry_run": "yes"}, "dry_run must be true or false")):
        with pytest.raises(ArgumentError, match=words):
            call(mem, body)
    with pytest.raises(ArgumentError, match="text must be a string"):
        review_api.edit(mem, "0123456789abcdef", {"text": 5})


def test_a_type_filter_widened_past_sqlite_vecs_largest_k_returns_what_the_store_has(make_memory):
    facts = "---\ntype: fact\n---\n\n" + "".join(f"- 2025-01-{i + 1:02d}: green tea number {i}\n" for i in range(6))
    liked = "---\ntype: preference\n---\n\n- 2025-02-01: I prefer my tea without sugar\n"
    mem = make_memory(global_notes={"user/tea.md": facts, "user/liked.md": liked})
    # 500 asked of one type: 2,500 read, a vector pool of 5,000 (sqlite-vec answers at most 4,096 neighbours)
    got = ui_api.search(mem, {"query": "tea", "type": "preference", "limit": 500})["results"]
    assert [h["type"] for h in got] == ["preference"]
    assert len(mem.search("tea", limit=2100, bump=False)) == 7
