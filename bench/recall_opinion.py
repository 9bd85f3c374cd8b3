"""A second model's opinion in recall's cut (retrieval/opinion.py), compared by bench/recall_designs.py.

The captured pools carry e5's corrected score (`hub`), the embedder's (`hub_embedder`) and the default's combination
(`hub_both`: the embedder's put on e5's mean and spread over the pool, averaged where the embedder agrees with e5 on
every pair of scripts). Each design here reads them and changes only a question about its asker that names no relative
or role; `without` strips the combination, so the designs before it cut as they did.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from indexer.retrieval import hubness, relations, relevance
from recall_narrow import settings

SIGNALS = ("hub_both", "hub_embedder")


def without(design):
    """A design as it cut before the second opinion: the hits less its signals."""
    def cut(hits, q):
        return design([replace(h, signals={k: v for k, v in h.signals.items() if k not in SIGNALS}) for h in hits], q)
    return cut


def _asker(hits, q) -> bool:
    return relevance.about_asker(q) and bool(hubness.scored(hits)) and not any(
        h.signals.get("member") or h.signals.get("role") for h in hits)


def _gathers(q) -> bool:
    return relevance.gathers(q) or relations.asks_instructions(q)


def _pair(hits):
    have = [h for h in hits if h.signals.get("hub") is not None and h.signals.get("hub_embedder") is not None]
    return have, np.array([h.signals["hub"] for h in have]), np.array([h.signals["hub_embedder"] for h in have])


def combined(base, how, gathering=False):
    """`base`, with e5's corrected score replaced by how(e5's, the embedder's) over the pool for a narrow question
    about its asker (gathering: for a gathering one too); heard on every pair of scripts, agreeing or not; how None:
    the default's combination (`hub_both`)."""
    def cut(hits, q):
        have, a, b = _pair(hits)
        both = [h.signals.get("hub_both") for h in have]
        if not _asker(hits, q) or (_gathers(q) and not gathering) or len(have) < 3 or b.std() <= 0 or (
                how is None and None in both):
            return without(base)(hits, q)
        new = dict(zip((id(h) for h in have), how(a, b).tolist() if how else both))
        return without(base)([replace(h, signals={**h.signals, "hub": new[id(h)]}) if id(h) in new else h
                              for h in hits], q)
    return cut


def z_mean(a, b):
    return (a + a.mean() + (b - b.mean()) * a.std() / b.std()) / 2


def raw_mean(a, b):
    return (a + b) / 2


def rank_mean(a, b, step=hubness.NARROW_GAP):
    """The two ranks averaged, one rank worth the narrow gap."""
    return -((-a).argsort().argsort() + (-b).argsort().argsort()) / 2 * step


def agreeing(base, k=2):
    """A narrow question's block past its first memory keeps only those among the embedder's k best."""
    def cut(hits, q):
        kept = without(base)(hits, q)
        have, _, b = _pair(hits)
        if not _asker(hits, q) or _gathers(q) or len(kept) < 2 or len(have) < 3:
            return kept
        top = {(h.store, h.id) for h, _ in sorted(zip(have, b.tolist()), key=lambda x: -x[1])[:k]}
        return kept[:1] + [h for h in kept[1:] if (h.store, h.id) in top]
    return cut


def rows(base) -> dict:
    """The named rows recall_designs.py measures beside the others; `base` is the default cut (by_hubness())."""
    return {
        "second opinion: raw mean of both corrected scores (narrow)": combined(base, raw_mean),
        "second opinion: rank average (narrow)": combined(base, rank_mean),
        "second opinion: z mean, gathering questions too": combined(base, z_mean, gathering=True),
        "second opinion: narrow block past the first only in the embedder's 2 best": agreeing(base),
        "second opinion: z mean (narrow), unweighted": combined(base, z_mean),
        "second opinion: z mean (narrow), where the embedder agrees with e5": combined(base, None),
        **{f"second opinion: e5's narrow block less what lies {v} std under on the z mean (not default)":
           settings(base, OPINION_SPREAD=v) for v in (0.5, 1.0, 1.5)},
    }
