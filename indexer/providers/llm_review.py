"""The configured LLM's part in review: ADD / UPDATE / NONE for a new memory close to a stored one, and a journal
week's summary for consolidation (neither without an LLM)."""

from __future__ import annotations

import re

from indexer.errors import ProviderError
from indexer.providers.llm import chat

SUMMARY_SYSTEM = ("You summarise one week of a person's journal for their long-term memory. Write 3 to 8 short "
                  "bullet points (- ...) with the decisions, facts, plans and events that may matter later; keep "
                  "names, places, numbers and dates; add nothing the entries do not say; drop chit-chat. Write in "
                  "the entries' language. Answer with the bullet points only.")
JUDGE_SYSTEM = ("You keep a person's long-term memory free of duplicates and stale values. Compare a new memory "
                "with a stored one and answer with one word: ADD if the new one says something the stored one "
                "does not and both stay true; UPDATE if the new one replaces the stored one (the same thing with "
                "a new value); NONE if it says the same thing as the stored one.")
JUDGE_USER = "Stored: {old}\nNew: {new}"
VERDICTS = ("ADD", "UPDATE", "NONE")
_WORD = re.compile(r"\b(ADD|UPDATE|NONE)\b")
_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)  # reasoning models put this before the answer


def summariser(cfg):
    """summarise(lines) -> text by the configured LLM, or None when no LLM is configured."""
    if not cfg.llm:
        return None

    def summarise(lines: list[str]) -> str:
        return chat(cfg, [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": "\n".join(lines)}])
    return summarise


def judge(cfg):
    """judge(old, new) -> "ADD" | "UPDATE" | "NONE" by the configured LLM (ProviderError when it cannot say), or
    None when no LLM is configured."""
    if not cfg.llm:
        return None

    def verdict(old: str, new: str) -> str:
        answer = chat(cfg, [{"role": "system", "content": JUDGE_SYSTEM},
                            {"role": "user", "content": JUDGE_USER.format(old=old, new=new)}])
        found = _WORD.findall(_THINKING.sub("", answer).upper())
        if len(set(found)) != 1:
            raise ProviderError(f"the LLM {cfg.llm_model} answered no single ADD, UPDATE or NONE "
                                f"({len(answer)} characters)")
        return found[0]
    return verdict
