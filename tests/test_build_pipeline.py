"""A build embeds one batch ahead of its writes: every text once, the same index as writing batch by batch."""

from __future__ import annotations

from indexer.index import db, sql
from indexer.sync import store_sync as sync

SHARED = "# Reminder\n\n" + "Every note in this folder ends with the same reminder about the quarterly backup drill. " * 12


def _notes(n: int) -> dict[str, str]:
    body = "Note number {i} is about topic {t}, and it says so at length to fill a chunk of its own. " * 12
    return {f"notes/{i:03d}.md": f"# Note {i}\n\n{body.format(i=i, t=i * 7)}\n\n{SHARED}\n" for i in range(n)}


def test_text_shared_by_consecutive_batches_is_embedded_once(make_memory, counting):
    n = 2 * sync.FILES_PER_BATCH + 6  # three batches: the second borrows from the first, the third reads it back
    mem = make_memory(_notes(n), embedder=counting)
    st = mem.stores("global")[0]
    texts = db.rows(st.con, "SELECT count(DISTINCT content_hash) AS n FROM chunks")[0]["n"]
    assert counting.documents == texts  # no text embedded twice
    assert sql.chunk_count(st.con) == sql.vector_signature(st.con)[1]  # every chunk has its vector
    hashes = [r["content_hash"] for r in db.rows(st.con, "SELECT content_hash FROM chunks")]
    assert len(hashes) == 2 * n and texts == n + 1  # the reminder is one chunk of every note, one text


def test_a_failing_model_stops_the_build_without_half_written_files(make_memory, counting):
    mem = make_memory(_notes(sync.FILES_PER_BATCH + 3), embedder=counting, index=False)
    counting.fail = True
    try:
        mem.index()
    except RuntimeError as exc:
        assert "simulated" in str(exc)
    else:
        raise AssertionError("the model's failure must reach the caller")
    st = mem.stores("global")[0]
    assert sql.chunk_count(st.con) == 0 and not sql.all_documents(st.con)  # nothing recorded as indexed
    counting.fail = False
    mem.index()
    assert len(sql.all_documents(st.con)) == sync.FILES_PER_BATCH + 3
