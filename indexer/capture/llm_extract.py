"""The `llm` policy: the configured LLM writes the atomic facts of the last turn(s), with the prompt that ships
with mdmem (`extract_prompt.txt`); anything but a usable JSON answer is a ProviderError the caller falls back on."""

from __future__ import annotations

import json
import re
from importlib import resources

from indexer.capture.triggers import Item
from indexer.errors import ProviderError
from indexer.notes.names import MEMORY_TYPES
from indexer.notes.textseg import mostly_han
from indexer.providers.llm import chat

PROMPT_FILE = "extract_prompt.txt"
LANGUAGES = {True: "Chinese (简体中文), as the conversation is written", False: "the conversation's own language"}
MAX_FACT_CHARS = 500  # a longer "fact" is the model retelling the conversation
MAX_FACTS = 20
_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)  # reasoning models put this before the answer
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.I)


def prompt() -> str:
    """The system prompt as shipped, before the language is filled in."""
    return resources.files("indexer.capture").joinpath(PROMPT_FILE).read_text(encoding="utf-8")


def extract(cfg, turns: list[tuple[str, str, str]], context: list[tuple[str, str, str]] = ()) -> list[Item]:
    """The facts the LLM finds in turns ((role, speaker, text) each), earlier context given for references;
    ProviderError when it cannot be asked, does not answer in time, or answers no JSON list of facts."""
    text = "\n".join(t for _r, _s, t in turns)
    system = prompt().format(language=LANGUAGES[mostly_han(text)])
    lines = [f"{_who(r, s)}: {t}" for r, s, t in context] + [f"(new) {_who(r, s)}: {t}" for r, s, t in turns]
    answer = chat(cfg, [{"role": "system", "content": system},
                        {"role": "user", "content": "Conversation:\n" + "\n".join(lines)}])
    speakers = {s or r for r, s, _t in turns}
    return parse(answer, speakers, next(iter(speakers)) if len(speakers) == 1 else "")


def parse(answer: str, speakers: set[str] = frozenset(), default_speaker: str = "") -> list[Item]:
    """The items of an answer: a JSON array (or JSON lines) of {"fact", "type", "importance", "speaker"} or of
    strings; ProviderError for anything else."""
    body = _FENCE.sub("", _THINKING.sub("", answer or "").strip()).strip()
    try:
        data = json.loads(body)
    except ValueError:
        data = _json_lines(body)
    if isinstance(data, dict):
        data = data.get("facts", data.get("memories", [data] if "fact" in data else None))
    if not isinstance(data, list) or len(data) > MAX_FACTS:
        raise ProviderError(f"the LLM answered no JSON list of facts ({len(answer or '')} characters); "
                            "try another llm_model")
    items = [_item(x, speakers, default_speaker) for x in data]
    if any(i is None for i in items):
        raise ProviderError("the LLM answered a list holding something other than facts; try another llm_model")
    return items


def _json_lines(body: str):
    out = []
    for line in body.splitlines():
        line = line.strip().rstrip(",")
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            return None
    return out or None


def _item(x, speakers: set[str], default_speaker: str) -> Item | None:
    if isinstance(x, str):
        x = {"fact": x}
    if not isinstance(x, dict):
        return None
    fact = x.get("fact", x.get("text", x.get("memory")))
    if not isinstance(fact, str) or not fact.strip() or len(fact) > MAX_FACT_CHARS:
        return None
    type_ = x.get("type") if x.get("type") in MEMORY_TYPES else "fact"
    imp = x.get("importance")
    imp = imp if isinstance(imp, int) and not isinstance(imp, bool) and 1 <= imp <= 5 else None
    who = x.get("speaker") if x.get("speaker") in speakers else default_speaker
    return Item(" ".join(fact.split()), type_, imp, who or "")


def _who(role: str, speaker: str) -> str:
    return speaker if speaker and speaker != role else role or "user"
