"""Memory spaces: nothing crosses between them in search, recall, recent, add, get, update or forget."""

import pytest

from indexer.errors import InputError, NotFoundError

ALICE = "- 2025-03-01: Alice keeps a grey cat called Miso who sleeps on the piano."
BOB = "- 2025-03-02: Bob keeps a grey cat called Tofu who sleeps on the radiator."
RESTATED = "# Facts\n\n- 2025-03-05: Alice keeps a grey cat called Miso, who sleeps on the piano.\n"
NOTES = {
    "user/preference.md": "# Preferences\n\n- 2025-01-05: I keep a grey cat called Pepper who sleeps on the sofa.\n",
    "spaces/alice/user/fact.md": f"# Facts\n\n{ALICE}\n",
    "spaces/bob/user/fact.md": f"# Facts\n\n{BOB}\n",
}


def _uris(hits):
    return {h.uri for h in hits}


def test_search_recall_and_recent_stay_inside_their_space(make_memory):
    mem = make_memory(NOTES)
    for mode in ("hybrid", "fts", "vector"):
        assert _uris(mem.search("grey cat sleeps", mode=mode, space="alice")) == {"spaces/alice/user/fact.md"}
        assert _uris(mem.search("grey cat sleeps", mode=mode, space="bob")) == {"spaces/bob/user/fact.md"}
        assert _uris(mem.search("grey cat sleeps", mode=mode)) == {"user/preference.md"}
    assert _uris(mem.search("Miso piano", space="carol")) == set()
    # under is read inside the space
    assert _uris(mem.search("grey cat", space="alice", under=["user/"])) == {"spaces/alice/user/fact.md"}
    block = mem.recall("what is the cat called?", space="bob")["text"]
    assert "Tofu" in block and "Miso" not in block and "Pepper" not in block
    assert {r["space"] for r in mem.recent(space="alice")} == {"alice"}
    assert {r["space"] for r in mem.recent()} == {None}


def test_add_writes_into_the_space_and_never_reinforces_another(make_memory):
    mem = make_memory(NOTES)
    res = mem.add(ALICE[len("- 2025-03-01: "):], type="fact", space="bob")  # Alice's memory, said in Bob's space
    assert res["action"] == "appended" and res["uri"] == "spaces/bob/user/fact.md"
    again = mem.add(ALICE[len("- 2025-03-01: "):], type="fact", space="alice")
    assert again["action"] == "reinforced" and again["uri"] == "spaces/alice/user/fact.md"
    journal = mem.add("Seraphina met the traveller at the glade.", type="episodic", space="Seraphina")
    assert journal["uri"].startswith("spaces/Seraphina/journal/")
    with pytest.raises(InputError, match="space"):
        mem.add("x y z", file="spaces/bob/notes.md")  # no path from the default space into another
    with pytest.raises(InputError, match="not a usable name"):
        mem.add("x y z", space="../bob")


def test_get_update_and_forget_refuse_ids_and_paths_of_another_space(make_memory):
    mem = make_memory(NOTES)
    alice = mem.search("Miso", space="alice", limit=1)[0]
    for space in (None, "bob"):
        with pytest.raises(NotFoundError):
            mem.get(alice.id, space=space)
        with pytest.raises(NotFoundError):
            mem.update(alice.id, "Alice has no cat.", space=space)
        with pytest.raises(NotFoundError):
            mem.forget(alice.id, space=space)
    with pytest.raises(NotFoundError, match="space alice"):
        mem.get("spaces/alice/user/fact.md")
    assert mem.get("user/fact.md:3", space="alice")["text"] == ALICE
    assert mem.get("spaces/alice/user/fact.md:3", space="alice")["text"] == ALICE
    assert mem.get(alice.id, space="alice")["space"] == "alice"
    assert [m["space"] for m in mem.forget_matching("grey cat", space="bob", yes=True)["memories"]] == ["bob"]
    assert ALICE in (mem.cfg.home / "spaces/alice/user/fact.md").read_text(encoding="utf-8")
    mem.update(alice.id, "Alice keeps a black cat called Miso.", space="alice")
    assert "black cat" in (mem.cfg.home / "spaces/alice/user/fact.md").read_text(encoding="utf-8")
    assert "Pepper" in (mem.cfg.home / "user/preference.md").read_text(encoding="utf-8")


def test_a_restatement_in_one_space_does_not_reinforce_another(make_memory):
    mem = make_memory(NOTES)
    st = mem.stores("global")[0]
    (mem.cfg.home / "spaces/bob/user/more.md").write_text(
        RESTATED, encoding="utf-8")
    mem.index()
    assert _reinforcement(st, "spaces/alice/user/fact.md") == 0.0
    # the same words in Alice's own space do count
    (mem.cfg.home / "spaces/alice/user/more.md").write_text(
        RESTATED.replace("03-05", "03-06"), encoding="utf-8")
    mem.index()
    assert _reinforcement(st, "spaces/alice/user/fact.md") == 1.0


def _reinforcement(st, uri):
    return sum(r[0] for r in st.con.execute("SELECT reinforcement FROM chunks WHERE uri = ?", (uri,)).fetchall())


def test_space_knn_and_the_exact_scan_agree(make_memory, monkeypatch):
    """A space's nearest memories come from oversampled KNN; a sliver of a big store is scanned exactly."""
    from indexer.index import sql
    notes = dict(NOTES)
    for i in range(12):
        notes[f"spaces/bob/journal/2025-04-{i + 1:02d}.md"] = f"# Day {i}\n\n- 10:00: Bob fed Tofu at {i + 7} o'clock.\n"
    mem = make_memory(notes)
    for space in (None, "bob", "alice"):
        knn = [(h.id, round(h.score, 6)) for h in mem.search("feeding the cat", mode="vector", space=space)]
        monkeypatch.setattr(sql.queries, "KNN_MAX", 1)
        exact = [(h.id, round(h.score, 6)) for h in mem.search("feeding the cat", mode="vector", space=space)]
        monkeypatch.undo()
        assert knn == exact and knn


def test_the_command_line_ranks_several_spaces_and_the_shared_notes_together(tmp_path):
    import json
    from cli_process import mdmem
    from conftest import write_notes
    home = tmp_path / "home"
    write_notes(home, {**NOTES, "spaces/carol/user/fact.md": "# Facts\n\n- 2025-03-03: Carol keeps a grey cat "
                                                             "called Nori who sleeps in the sink.\n"})
    assert mdmem("--home", str(home), "index").returncode == 0

    def run(*args):
        r = mdmem("--home", str(home), *args, "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    two = run("search", "grey cat sleeps", "--space", "alice", "--space", "bob")["results"]
    assert {h["uri"] for h in two} == {"spaces/alice/user/fact.md", "spaces/bob/user/fact.md"}
    shared = run("search", "grey cat sleeps", "--space", "alice", "--shared")["results"]
    assert {h["uri"] for h in shared} == {"spaces/alice/user/fact.md", "user/preference.md"}
    block = run("recall", "what is the cat called?", "--space", "bob", "--space", "carol", "--shared")
    assert {m["uri"] for m in block["memories"]} == {"spaces/bob/user/fact.md", "spaces/carol/user/fact.md",
                                                     "user/preference.md"}
    small = run("recall", "what is the cat called?", "--space", "bob", "--space", "carol", "--shared",
                "--max-tokens", "45")
    assert 1 <= len(small["memories"]) < 3  # a budget in tokens holds fewer
    r = mdmem("--home", str(home), "recall", "cat", "--space", "bob", "--max-tokens", "5")
    assert r.returncode == 2 and "--max-tokens must be a whole number of 20 or more" in r.stderr
