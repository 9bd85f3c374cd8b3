"""Designs for a narrow question about its asker (one fact: how many memories its block keeps, which comes first).

Compared by bench/recall_designs.py. Each changes only the block of a question about its asker that does not gather
and names no relative or role: hubness.answering's narrow cut.
"""

from __future__ import annotations

import numpy as np

from indexer import ranking_model
from indexer.notes.textseg import mostly_han
from indexer.retrieval import hubness, relations, relevance


BEFORE = {"NARROW_SPREAD": 0.0, "FIRST_SPREAD": float("inf")}  # a fixed narrow gap, the ranking's first always kept


def settings(design, **values):
    """The design cutting with hubness's settings set to `values` (as they were again after)."""
    def cut(hits, q):
        old = {name: getattr(hubness, name) for name in values}
        vars(hubness).update(values)
        try:
            return design(hits, q)
        finally:
            vars(hubness).update(old)
    return cut


def _narrow(hits, q) -> bool:
    return relevance.about_asker(q) and bool(hubness.scored(hits)) and not any(
        h.signals.get("member") or h.signals.get("role") for h in hits) and not (
        relevance.gathers(q) or relations.asks_instructions(q))


def reciprocal(base, vecs, k=1):
    """CSLS reciprocity: besides the best corrected memory (and the block's first), a memory stays only when the
    question is among its k nearest of {the question, the background questions of its language}: a memory merely
    sharing a topic lies nearer one of the generic questions."""
    def cut(hits, q):
        kept = base(hits, q)
        if not _narrow(hits, q) or not kept:
            return kept
        bg = ranking_model.background(hubness.QUESTIONS_ZH if mostly_han(q) else hubness.QUESTIONS_EN, role="query")
        top = hubness.scored(hits)[0]

        def rank(h) -> int:
            v = vecs.get((h.store, h.id))
            return 1 if v is None else 1 + int(((v @ bg.T) > h.signals["e5_cosine"]).sum())
        return [h for h in kept if h is top or h is kept[0] or rank(h) <= k]
    return cut


def ordered(base, how="borda"):
    """The narrow block in another order than the ranking's: by the corrected score ("hub"), or by the sum of a
    memory's places in the ranking and in the corrected scores ("borda")."""
    def cut(hits, q):
        kept = base(hits, q)
        if not _narrow(hits, q):
            return kept
        place = {id(h): i for i, h in enumerate(hits)}
        hub = {id(h): i for i, h in enumerate(hubness.scored(hits))}
        if how == "hub":
            return sorted(kept, key=lambda h: hub.get(id(h), len(hits)))
        return sorted(kept, key=lambda h: (place[id(h)] + hub.get(id(h), len(hits)), hub.get(id(h), len(hits))))
    return cut


def with_margin(base, weight=0.25, gap=0.7, first=1.25):
    """The narrow cut on the corrected score plus `weight` times the relevance margin (the e5 cosine over the
    question's encyclopedic level in the memory's language), its gap and the ranking's first in stds of that sum."""
    def cut(hits, q):
        pool = [h for h in hubness.scored(hits) if h.signals.get("margin") is not None]
        if not _narrow(hits, q) or len(pool) < hubness.SPREAD_MIN:
            return base(hits, q)
        value = {id(h): h.signals["hub"] + weight * h.signals["margin"] for h in pool}
        top, spread = max(value.values()), float(np.std(list(value.values())))
        kept = [h for h in hits if id(h) in value and value[id(h)] >= top - gap * spread]
        far = id(hits[0]) in value and value[id(hits[0])] < top - first * spread and (
            mostly_han(hits[0].content) == mostly_han(q))
        return kept if hits[0] in kept or far else [hits[0], *kept]
    return cut


def designs(by_hubness, vecs) -> dict:
    """The rows bench/recall_designs.py measures (by_hubness: its cut with the narrow cut's settings as arguments)."""
    first = by_hubness(spread=None)
    return {
        "narrow: the ranking's first (question's script) only within 1.25 std of the best corrected score": first,
        "narrow: that + the order by ranking and corrected places (borda)": ordered(first),
        "narrow: that + the order by the corrected score": ordered(first, "hub"),
        "narrow: first within 1.25 std + fixed gap 0.008": by_hubness(narrow=0.008, spread=None),
        "narrow: first within 1.25 std + fixed gap 0.012": by_hubness(narrow=0.012, spread=None),
        "narrow: first within 1.0 std, gap 0.5 std": by_hubness(first=1.0),
        "narrow: first within 1.5 std, gap 0.5 std": by_hubness(first=1.5),
        "narrow: first within 1.25 std + gap 0.4 std of the pool's corrected scores": by_hubness(spread=0.4),
        "narrow: first within 1.25 std + gap 0.6 std": by_hubness(spread=0.6),
        "narrow: first within 1.25 std + gap 0.5 std + reciprocal (k=1)": reciprocal(by_hubness(), vecs),
        "narrow: first within 1.25 std + gap 1.0 std + reciprocal (k=2)": reciprocal(by_hubness(spread=1.0), vecs, 2),
        "narrow: corrected + 0.25 margin, gap 0.7 std": with_margin(by_hubness()),
        "narrow: corrected + 0.25 margin, gap 0.5 std": with_margin(by_hubness(), gap=0.5),
        "narrow: corrected + 0.25 margin, gap 1.0 std": with_margin(by_hubness(), gap=1.0),
        "narrow: first within 1.25 std + gap 0.5 std of the pool's corrected scores (narrow cut now)": by_hubness(),
    }

