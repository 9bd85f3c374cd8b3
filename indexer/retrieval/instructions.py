"""An instruction to the assistant answers how it should reply, not a question about the asker's own facts."""

from __future__ import annotations

import re

from indexer.retrieval import relations

# a question speaking to the assistant or of its replies ("Can you use emoji when we chat?", 你回答时要注意什么？)
# may be answered by an instruction; one that does not ("Which language do I use at work?") asks about the asker.
# e5 puts an instruction close to any question on its topic: on recall-focus-dev one about showing code stood
# first for a question about the language used at work, 0.019 of corrected score over the job memory that answered
_TO_ASSISTANT = re.compile(r"\b(?:you|your|yours|yourself|answer|repl(?:y|ies|ied)|respon(?:d|ds|se|ses)|chat"
                           r"|chatting|talk|(?:for|to) me)\b|[你您]|回答|回复|答复|聊天|说话|[给帮为替]我", re.I)


def to_assistant(query: str) -> bool:
    """Whether a question speaks to the assistant or asks about its replies (so an instruction may answer it)."""
    return relations.asks_instructions(query) or bool(_TO_ASSISTANT.search(query))


# relations.roles_of reads any 不要 or 请 as an instruction; a memory with a clause opening on its writer and not
# speaking to the assistant ("我讨厌香菜，点菜时要说不要放。", "Don't suggest mushrooms; I hate them.") states a
# fact about them too, and answers a question about them (bench/zh_memories.py: inside 0.975 -> 0.950 without this)
_CLAUSE = re.compile(r"[;；。.!！?？,，:：]\s*")
_OPENS_ON_WRITER = re.compile(r"^(?:\d{4}-\d\d-\d\d:\s*)?(?:I|I'm|I've|I'd|My|We|We're|Our|我|咱)(?![a-z])")
_SPEAKS_TO = re.compile(r"\b(?:you|your|answers?|repl(?:y|ies)|respon(?:d|se|ses))\b|[你您]|回答|回复|答复", re.I)


def instructs(text: str) -> bool:
    """Whether a memory only tells the assistant how to behave: relations.roles_of reads it as an instruction and
    none of its clauses states something of its writer."""
    body = re.sub(r"^\s*[-*]\s+(?:\d{4}-\d\d-\d\d:\s*)?", "", text.strip())
    return "assistant" in relations.roles_of(body) and not any(
        _OPENS_ON_WRITER.match(c) and not _SPEAKS_TO.search(c) for c in _CLAUSE.split(body))


def apart(hits: list, query: str) -> list:
    """The hits a question about the asker's own facts is cut from: without the instructions to the assistant,
    unless the question speaks to the assistant or no other memory carries a corrected score."""
    if to_assistant(query):
        return hits
    rest = [h for h in hits if not instructs(h.content)]
    return rest if any(h.signals.get("hub") is not None for h in rest) else hits
