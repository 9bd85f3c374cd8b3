"""Recall designs: instructions to the assistant out of the block of a question about the asker's own facts."""

from __future__ import annotations

from recall_narrow import settings

from indexer.retrieval import hubness, instructions, relations, relevance


def _asker(hits, q) -> bool:
    return relevance.about_asker(q) and bool(hubness.scored(hits)) and not any(
        h.signals.get("member") or h.signals.get("role") for h in hits)


def apart(base, gathering=True):
    """`base` over the pool less its instructions (instructions.apart) for a question about the asker that does
    not speak to the assistant; gathering=False: a question gathering by its words keeps them."""
    def cut(hits, q):
        if not _asker(hits, q) or not gathering and (relevance.gathers(q) or relations.asks_instructions(q)):
            return base(hits, q)
        return base(instructions.apart(hits, q), q)
    return cut


def after(base):
    """`base`'s block, then its instructions out when it keeps another memory (the pool's cut unchanged)."""
    def cut(hits, q):
        kept = base(hits, q)
        if not _asker(hits, q) or instructions.to_assistant(q):
            return kept
        rest = [h for h in kept if not instructions.instructs(h.content)]
        return rest or kept
    return cut


def rows(base) -> dict:
    """The named rows recall_designs.py measures beside the others; `base` is the default cut."""
    return {
        "instructions apart: out of the pool of a question not to the assistant": settings(apart(base), MARGIN_GAP=0),
        "instructions apart: out of the pool, narrow questions only": settings(apart(base, False), MARGIN_GAP=0),
        "instructions apart: out of the block when another memory is kept": settings(after(base), MARGIN_GAP=0),
        **{f"instructions apart + narrow block within {v} of the best margin{' (default)' if v == 0.05 else ''}":
           settings(apart(base), MARGIN_GAP=v) for v in (0.025, 0.03, 0.05, 0.06)},
        "narrow block within 0.05 of the best margin, instructions kept": base,
    }
