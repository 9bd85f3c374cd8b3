"""Pseudo-relevance feedback: expansion words, and hybrid search finding what they point to."""

import math
import random

from indexer.retrieval import feedback
from indexer.retrieval.feedback import expansion_terms


def _doc(*words):
    return [(w, w.lower()) for w in words]


def test_words_shared_by_the_top_hits_and_rare_elsewhere_win():
    top = [_doc("Falcon", "launch", "Kestrel", "rocket", "the", "pad"),
           _doc("Falcon", "Kestrel", "engine", "the", "test"),
           _doc("Falcon", "Kestrel", "weather", "delay")]
    counts = {"kestrel": 4, "rocket": 2, "engine": 30, "pad": 3, "test": 200, "weather": 40, "delay": 50}
    exp = expansion_terms(_doc("Falcon", "launch"), top, lambda t, _w, cap: min(counts.get(t, 1), cap), 1000, 3)
    assert exp.words[0] == "Kestrel"  # in every top hit, in few notes overall
    assert "Falcon" not in exp.words and "launch" not in exp.words  # already asked for
    assert "the" not in exp.words  # function words never expand a query
    assert list(exp.weights) == sorted(exp.weights, reverse=True) and len(exp.words) == 3


def test_one_indexed_term_is_one_word_and_lone_digits_are_skipped():
    top = [[("meetings", "meet"), ("meeting", "meet"), ("3", "3"), ("budget", "budget")]]
    exp = expansion_terms([], top, lambda t, _w, cap: 1, 100, 5)
    assert exp.words == ("meetings", "budget")  # first spelling seen stands for the term


def test_nothing_to_expand_gives_no_words():
    assert expansion_terms(_doc("a"), [], lambda t, _w, cap: 0, 10, 5).words == ()
    assert expansion_terms(_doc("x"), [_doc("x", "the")], lambda t, _w, cap: 0, 10, 5).words == ()
    assert expansion_terms([], [_doc("kestrel")], lambda t, _w, cap: 0, 10, 0).words == ()


def test_counting_only_as_far_as_needed_picks_the_words_of_counting_all(monkeypatch):
    """Against the plain rule (count every word, rank by share * idf, ties by word) on random top hits,
    with Zipf-like counts so that common words dominate the shares, as they do in real notes."""
    monkeypatch.setattr(feedback, "FIRST_CAP", 4)  # small caps: most words stop at a cap at least once
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(300)]
    df = {w: max(1, int(5000 / (i + 1) ** 1.1) + rng.randrange(3)) for i, w in enumerate(vocab)}
    read = {"rows": 0, "of all": 0}

    def count_upto(term, surface, cap):
        assert surface == term.upper()  # the spelling the top hits used
        read["rows"] += min(df[term], cap)
        read["of all"] += df[term]
        return min(df[term], cap)

    for trial in range(200):
        docs = [[(w.upper(), w) for w in rng.choices(vocab, weights=[1 / (i + 1) for i in range(300)], k=40)]
                for _ in range(rng.randrange(1, 16))]
        n_terms = rng.randrange(1, 9)
        got = expansion_terms([], docs, count_upto, 20_000, n_terms)
        tf = {}
        for doc in docs:
            for _w, t in doc:
                tf[t] = tf.get(t, 0) + 1 / len(doc)
        shortlist = sorted(tf.items(), key=lambda x: (-x[1], x[0]))[:feedback.LOOKUP_WORDS]
        plain = sorted(((s * math.log(20_001 / (df[t] + 0.5)), t) for t, s in shortlist), key=lambda x: (-x[0], x[1]))
        assert got.words == tuple(t.upper() for _s, t in plain[:n_terms])
        assert got.weights == tuple(round(s, 6) for s, _t in plain[:n_terms])
    assert read["rows"] < read["of all"] / 3  # the long counts of common words were cut short


NOTES = {
    "journal/falcon-1.md": "# Falcon launch\n\nThe Falcon launch used the Kestrel booster from pad 39; the Kestrel stage burned for 160 seconds.\n",
    "journal/falcon-2.md": "# Falcon review\n\nFalcon launch review: the Kestrel booster performed nominally and Kestrel telemetry was clean.\n",
    "journal/falcon-3.md": "# Falcon schedule\n\nNext Falcon launch slips a week while the Kestrel booster is inspected.\n",
    "journal/booster.md": "# Vendor call\n\nThe vendor shipped a spare Kestrel booster; Kestrel inspections take two days each.\n",
    "journal/lunch.md": "# Lunch\n\nWe had noodles with the team and talked about the holiday plans.\n",
    "journal/garden.md": "# Garden\n\nPlanted tomatoes and basil; watering every morning before work.\n",
}


def test_hybrid_finds_a_note_that_shares_only_the_top_hits_vocabulary(make_memory):
    mem = make_memory(project_notes=NOTES)
    fts = [h.uri for h in mem.search("Falcon launch", mode="fts", limit=10)]
    assert "journal/booster.md" not in fts  # it never says "Falcon" or "launch"
    hits = mem.search("Falcon launch", mode="hybrid", limit=4, explain=True)
    assert "journal/booster.md" in [h.uri for h in hits]
    booster = next(h for h in hits if h.uri == "journal/booster.md")
    assert "Kestrel" in booster.explain["feedback_words"]
    assert booster.explain["feedback_bm25"] is not None  # found through the expansion words
    assert booster.explain["bm25"] is None  # not through the original ones


def test_feedback_off_is_plain_weighted_fusion(make_memory):
    mem = make_memory(project_notes=NOTES, feedback_weight=0.0)
    hits = mem.search("Falcon launch", mode="hybrid", limit=10, explain=True)
    assert all(h.explain["feedback_words"] == [] and h.explain["feedback"] == 0.0 for h in hits)
