"""The configured LLM's summary of a week of journal memories, for consolidation's proposals (none without one)."""

from __future__ import annotations

from indexer.providers.llm import chat

SYSTEM = ("You summarise one week of a person's journal for their long-term memory. Write 3 to 8 short bullet "
          "points (- ...) with the decisions, facts, plans and events that may matter later; keep names, places, "
          "numbers and dates; add nothing the entries do not say; drop chit-chat. Write in the entries' language. "
          "Answer with the bullet points only.")


def summariser(cfg):
    """summarise(lines) -> text by the configured LLM, or None when no LLM is configured."""
    if not cfg.llm:
        return None

    def summarise(lines: list[str]) -> str:
        return chat(cfg, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}])
    return summarise
