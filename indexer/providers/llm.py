"""The optional LLM (an OpenAI-compatible chat API, or Ollama): it rewrites a weak recall question into a query."""

from __future__ import annotations

import re
import time

from indexer.errors import ProviderError
from indexer.providers import usage
from indexer.providers.http_json import post_json
from indexer.providers.rankers import api_key, counted_tokens

DEFAULT_URLS = {"openai": "https://api.openai.com", "ollama": "http://localhost:11434"}

# The prompt that ships with mdmem. The language is named outright: small models otherwise answer a Chinese
# question with an English query, which then misses every Chinese memory's words.
REWRITE_SYSTEM = (
    "You turn the last question of a conversation into one standalone search query for a personal memory "
    "store of notes. Replace pronouns and references (he, she, that place, 他, 那里) with what the conversation "
    "says they are; keep names, places, dates and key words; add no fact the conversation does not hold. "
    "Write the query in {language}. Answer with the query only: one line, no quotes, no explanation.")
REWRITE_USER = "Conversation:\n{context}\n\nQuestion: {question}"
LANGUAGES = {True: "Chinese (简体中文)", False: "the question's own language"}
MAX_QUERY_CHARS = 400  # a longer answer is an essay, not a query
_THINKING = re.compile(r"<think>.*?</think>", re.S | re.I)  # reasoning models put this before the answer
_LABEL = re.compile(r"^\s*(?:search\s+)?(?:query|查询|搜索词|检索词)\s*[:：]\s*", re.I)
_QUOTES = "\"'`“”‘’「」『』"


def rewrite_question(cfg, question: str, context: str, chinese: bool) -> str:
    """The standalone search query the configured LLM makes of question (and the conversation's tail);
    ProviderError when it cannot be asked, does not answer within its deadline, or answers no query."""
    system = REWRITE_SYSTEM.format(language=LANGUAGES[bool(chinese)])
    user = REWRITE_USER.format(context=context or "(none)", question=question)
    return as_query(chat(cfg, [{"role": "system", "content": system}, {"role": "user", "content": user}]), cfg)


def chat(cfg, messages: list[dict]) -> str:
    """One answer of the configured LLM to messages, at temperature 0."""
    base = (cfg.llm_base_url or DEFAULT_URLS.get(cfg.llm, "")).rstrip("/")
    where = f"llm {cfg.llm}"
    if cfg.llm == "openai":
        url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        body = {"model": cfg.llm_model, "messages": messages, "temperature": 0, "stream": False}
    elif cfg.llm == "ollama":
        url = base + "/api/chat"
        body = {"model": cfg.llm_model, "messages": messages, "stream": False, "options": {"temperature": 0}}
    else:
        raise ProviderError(f"no LLM is configured (llm = {cfg.llm!r}); set provider in [llm] to openai or ollama")
    start, got = time.monotonic(), None
    try:
        got = post_json(url, body, headers=api_key(cfg.llm_api_key_env, where), timeout_s=cfg.llm_timeout_s,
                        max_retries=cfg.llm_max_retries, provider=where, key_env=cfg.llm_api_key_env)
    finally:
        usage.UsageLog(cfg.home).record(cfg.llm, cfg.llm_model, "llm", len(messages), counted_tokens(got),
                                        time.monotonic() - start, got is not None)
    try:
        text = got["choices"][0]["message"]["content"] if cfg.llm == "openai" else got["message"]["content"]
    except (KeyError, IndexError, TypeError):
        text = None
    if not isinstance(text, str):
        raise ProviderError(f"{where} at {url} answered without a message; check base_url and llm_model")
    return text


def as_query(answer: str, cfg=None) -> str:
    """The query in an answer: its first line, without thinking, a label or quotes; ProviderError for none."""
    lines = [ln.strip() for ln in _THINKING.sub("", answer).splitlines() if ln.strip()]
    query = _LABEL.sub("", lines[0]).strip().strip(_QUOTES).strip() if lines else ""
    if not query or len(query) > MAX_QUERY_CHARS:
        model = f" {cfg.llm_model}" if cfg is not None else ""
        raise ProviderError(f"the LLM{model} answered no usable query ({len(answer)} characters); "
                            "try another llm_model")
    return query
