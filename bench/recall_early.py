"""The first recall cuts measured, on the ranking model's cosine alone (rows of bench/recall_designs.py)."""

from __future__ import annotations

import numpy as np


def by_pool_level(z0=2.0, gap=0.02):
    """Against the question's own distribution over its pool: e5 cosine as a z-score, kept from z0 up."""
    def cut(hits, q):
        c = np.array([np.nan if h.signals.get("e5_cosine") is None else h.signals["e5_cosine"] for h in hits])
        ok = ~np.isnan(c)
        z = (c - np.median(c[ok])) / (c[ok].std() + 1e-9)
        best = np.nanmax(z)
        kept = [h for h, v in zip(hits, z) if v >= z0 and v >= best - gap / (c[ok].std() + 1e-9)]
        return [] if best < z0 else kept if hits[0] in kept else [hits[0], *kept]
    return cut


def by_largest_drop(k=8):
    """The ranking model's margin between consecutive hits: cut the first k at their largest cosine drop."""
    def cut(hits, q):
        top = hits[:k]
        c = [h.signals.get("e5_cosine") or 0.0 for h in top]
        order = sorted(range(len(top)), key=lambda i: -c[i])
        drops = [c[order[i]] - c[order[i + 1]] for i in range(len(order) - 1)]
        keep = set(order[:1 + int(np.argmax(drops))] if drops else order)
        return [h for i, h in enumerate(top) if i in keep]
    return cut
