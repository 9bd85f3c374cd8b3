"""A space's rows kept between searches (kept.VectorMatrix.nearest_within): the next search sees every write."""

from __future__ import annotations

import pytest

from indexer.index import sql
from indexer.kept.owner import KeptCopies
from indexer.memory import Memory

ALICE = ["Alice bakes rye bread on Sundays", "Alice's bike has a blue frame", "Alice learns the cello",
         "Alice keeps bees behind the shed", "爱丽丝每天早上跑步", "Alice reads old maps at night"]
BOB = ["Bob repairs radios", "Bob's dog is called Biscuit", "鲍勃喜欢下围棋"]
OWL = "A snowy owl sleeps in the barn"


def journal(lines: list[str]) -> str:
    return "---\ntype: episodic\n---\n\n# Journal\n\n" + "".join(
        f"- 2026-01-{i + 1:02d}: {text}\n" for i, text in enumerate(lines))


@pytest.fixture
def served(make_memory):
    """A Memory keeping copies, as the daemon lends one, over a store of two spaces."""
    mem = make_memory({"spaces/alice/journal/2026-01.md": journal(ALICE),
                       "spaces/bob/journal/2026-01.md": journal(BOB)})
    keep = KeptCopies(keep=True)
    with Memory(cfg=mem.cfg, embedder=mem.embedder, kept=keep) as served:
        yield served, keep
    keep.drop()


def owls(mem, space: str = "alice") -> list[str]:
    hits = mem.search("snowy owl in the barn", mode="vector", limit=3, bump=False, space=space, scope="global")
    return [h.content.split(": ", 1)[1] for h in hits if "owl" in h.content]  # each without its date


def test_the_next_search_in_a_space_sees_an_add_an_editors_save_and_a_forget(served):
    mem, keep = served
    st = mem.stores("global")[0]
    matrix = keep.refreshed(st)
    vectors = matrix.nbytes()
    assert owls(mem) == []
    held = matrix.nbytes()
    assert held > vectors  # the space's rows are kept beside the vectors by the first search in it
    assert owls(mem) == [] and matrix.nbytes() == held  # and read again by no later one while nothing changed

    added = mem.add(OWL, space="alice", scope="global")  # right after a search: the next one finds it
    assert owls(mem) == [OWL]
    assert owls(mem, "bob") == []  # another space's kept rows are its own

    note = mem.cfg.home / "spaces" / "bob" / "journal" / "2026-01.md"  # saved in an editor, then indexed
    note.write_text(note.read_text(encoding="utf-8") + "- 2026-01-09: Bob saw a snowy owl in the barn\n",
                    encoding="utf-8")
    mem.index()
    assert owls(mem, "bob") == ["Bob saw a snowy owl in the barn"] and owls(mem) == [OWL]

    hit = mem.search(OWL, mode="vector", limit=1, bump=False, space="alice", scope="global")[0]
    assert hit.uri == added["uri"]
    mem.forget(hit.id, space="alice")
    assert owls(mem) == []


def test_a_kept_space_ranks_as_sqlite_vec_does(served):
    mem, keep = served
    st = mem.stores("global")[0]
    for query in ("bread and baking", "跑步", "music lessons"):
        mine = [h.id for h in mem.search(query, mode="vector", limit=4, bump=False, space="alice", scope="global")]
        exact = [r["id"] for r in sql.vector_search(st.con, mem.embedder.embed_query(query), 4, space="alice")]
        assert mine == exact, query
    assert keep.refreshed(st) is not None


class _CountedLock:
    """A real lock that counts who took it: which readers of the owner's dicts wait for its writers."""

    def __init__(self, inner):
        self.inner, self.taken = inner, 0

    def __enter__(self):
        self.inner.acquire()
        self.taken += 1

    def __exit__(self, *exc):
        self.inner.release()


def test_the_owners_readers_take_the_lock_its_writers_hold(served):
    mem, keep = served
    st = mem.stores("global")[0]
    assert keep.vectors(st) is not None
    counted = keep._lock = _CountedLock(keep._lock)
    assert keep.lists(st.index_path) is None  # a matrix, not IVF lists
    assert counted.taken == 1
    assert keep.state(st.index_path)["kept_vectors"] is not None and counted.taken == 2
    keep.drop()
    assert keep.lists(st.index_path) is None and keep.state(st.index_path) == {"kept_vectors": None,
                                                                              "kept_words": None}
