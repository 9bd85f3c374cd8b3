"""Recall designs: instructions to the assistant out of the block of a question about the asker's own facts."""

from __future__ import annotations

from indexer.retrieval import gathering, hubness, instructions, relations, relevance


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


def by_margin(base, gap=0.025):
    """`apart(base)`, and a narrow block (not gathering by its words nor as e5 reads it) keeps only the memories
    within `gap` of the best ranking-model margin among those kept."""
    inner = apart(base)

    def cut(hits, q):
        kept = inner(hits, q)
        if not _asker(hits, q) or relevance.gathers(q) or relations.asks_instructions(q) or gathering.reads(q):
            return kept
        margins = [h.signals["margin"] for h in kept if h.signals.get("margin") is not None]
        if not margins:
            return kept
        return [h for h in kept if h.signals.get("margin") is None or h.signals["margin"] >= max(margins) - gap]
    return cut


def rows(base) -> dict:
    """The named rows recall_designs.py measures beside the others; `base` is the default cut."""
    return {
        "instructions apart: out of the pool of a question not to the assistant": apart(base),
        "instructions apart: out of the pool, narrow questions only": apart(base, gathering=False),
        "instructions apart: out of the block when another memory is kept": after(base),
        "instructions apart + narrow block within 0.025 of the best margin": by_margin(base),
        "instructions apart + narrow block within 0.04 of the best margin": by_margin(base, 0.04),
    }
