"""`recall`: a prompt-ready block within budget, weak-query fallbacks, silent when the index is down."""

import os
import re
import subprocess

from cli_process import command
from indexer.retrieval import recall as recall_mod
from indexer.retrieval.recall import HEADER, context_tail

NOTES = {
    "user/preference.md": "# Preferences\n\n- 2025-01-05: I prefer my coffee black, without sugar or milk.\n",
    "user/people.md": "# People\n\nAlice is my manager; she prefers short written updates on Fridays.\n",
    "user/health.md": "# Health\n\nI run 5 km every Saturday morning along the river to stay fit.\n",
}


def test_block_format_budget_and_no_duplicates(make_memory):
    mem = make_memory(NOTES, {"journal/2025-01-06.md": "# Journal\n\n- 09:00: I prefer my coffee black, without sugar or milk.\n"})
    out = mem.recall("coffee preference", max_chars=400)
    lines = out["text"].split("\n")
    assert lines[0] == HEADER and len(out["text"]) <= 400
    # the same memory in both stores: either copy may come first, and only one is shown
    assert re.match(r"- \[2025-01-0[56][^\]]*\] I prefer my coffee black", lines[1])
    assert re.search(r"\(source: (user/preference|journal/2025-01-06)\.md#L", lines[1])
    assert sum("coffee black" in ln for ln in lines) == 1  # same text in two notes: shown once
    # the block holds only what is on topic: the coffee memory alone, which needs about 125 characters
    tiny = mem.recall("coffee preference", max_chars=130)
    assert len(tiny["text"]) <= 130 and "coffee black" in tiny["text"]


def test_weak_query_uses_conversation_context(make_memory):
    mem = make_memory(NOTES)
    assert mem.recall("what about that?")["tier"] == "query"
    convo = "user: I need to plan my weekend exercise\nassistant: sure\nuser: how far do I usually run?"
    out = mem.recall("what about that?", context=convo)
    assert out["tier"] == "context"
    assert "run 5 km" in out["memories"][0]["text"]


def test_rewrite_command_is_the_third_tier(make_memory):
    mem = make_memory(NOTES, recall_rewrite_command="echo 'how does the user take coffee'")
    out = mem.recall("zzqx vvb")
    assert out["tier"] == "rewrite" and "coffee" in out["memories"][0]["text"]


def test_a_caller_compares_its_own_cut_through_the_seam_without_patching_the_module(make_memory, none_embedder):
    mem = make_memory(NOTES, embedder=none_embedder)
    seen = []

    def last_only(hits, query, judged, asked_for):  # a design of the cut, as bench/recall_designs.py gives one
        seen.append((len(hits), query, judged))
        return hits[-1:]

    def search(text, scope, limit):
        return mem.search(text, scope=scope, limit=limit, bump=False)
    args = dict(cfg=mem.cfg, search=search, record_access=lambda hits: None, warn=print)
    every = recall_mod.recall("prefers coffee Fridays run", **args)["memories"]
    assert len(every) > 1 and recall_mod.near_best([], "x") == []
    out = recall_mod.recall("prefers coffee Fridays run", **args, judge=lambda hits, query: True, cut=last_only)
    assert seen == [(len(every), "prefers coffee Fridays run", False)]  # no ranking model: nothing is judged
    assert [m["text"] for m in out["memories"]] == [every[-1]["text"]]


def test_context_tail_keeps_last_turns_within_cap():
    convo = "\n".join(f"turn {i}" for i in range(50))
    tail = context_tail(convo, 6, 1200)
    assert tail.split("\n") == [f"turn {i}" for i in range(44, 50)]
    assert len(context_tail("x" * 5000, 6, 1200)) == 1200
    assert context_tail('[{"role": "user", "content": "hi there"}]', 6, 1200) == "user: hi there"


def test_unavailable_index_prints_nothing_and_exits_0(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "index.db").write_bytes(b"this is not a database" * 100)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    r = subprocess.run(command("--home", str(home), "--embedder", "none", "recall", "coffee"),
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout == "" and "warning:" in r.stderr
