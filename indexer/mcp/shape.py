"""What MCP callers read: compact results, and errors as one plain sentence without command-line words."""

from __future__ import annotations

import re

from indexer.retrieval.recall import one_line_text

COMPACT_CHARS = 120
_FLAG = re.compile(r"--([a-z][a-z-]*)")
# "…, e.g. mdmem search \"backup plan\"" and "…; e.g. --limit 10": shell examples an MCP caller cannot type
_CLI_EXAMPLE = re.compile(r"[,;]?\s*(?:e\.g\.|for example)\s+(?:`?mdmem |--)[^;]*")
_ARG_NAMES = {"match": "query", "expect-hash": "expected_hash", "yes": "confirm"}


def compact(item: dict) -> dict:
    """An id, where it lives and its first words: enough to choose what to get in full."""
    text = one_line_text(item.get("content", item.get("text", "")))
    if len(text) > COMPACT_CHARS:
        text = text[:COMPACT_CHARS - 1].rstrip() + "…"
    out = {"id": item["id"], "uri": item["uri"], "lines": f"{item['start_line']}-{item['end_line']}",
           "store": item["store"], "text": text}
    if "score" in item:
        out["score"] = item["score"]
    return out


def plain(message: str) -> str:
    """An mdmem message for a tool caller: argument names instead of flags, no shell examples, one sentence."""
    text = " ".join(str(message).split())
    text = _CLI_EXAMPLE.sub("", text)
    text = _FLAG.sub(lambda m: _ARG_NAMES.get(m.group(1), m.group(1).replace("-", "_")), text)
    return sentence(text)


def sentence(text: str) -> str:
    text = text.strip().rstrip(";,: ") or "the call failed"
    return text[0].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def invalid_arguments(tool: str, errors: list[dict]) -> str:
    """Pydantic's validation errors as one sentence naming each argument and what it needs."""
    parts = []
    for err in errors:
        name = ".".join(str(p) for p in err.get("loc", ()) if p != "arguments") or "the arguments"
        kind = err.get("type", "")
        if kind == "missing":
            parts.append(f"{name} is required")
        elif kind == "literal_error":
            parts.append(f"{name} must be one of {err.get('ctx', {}).get('expected', 'the listed values')}")
        elif kind.startswith("int_"):
            parts.append(f"{name} must be a whole number")
        elif kind.startswith("bool_"):
            parts.append(f"{name} must be true or false")
        elif kind.startswith("string_"):
            parts.append(f"{name} must be text")
        elif kind.startswith(("greater_than", "less_than")):
            parts.append(f"{name} {err.get('msg', 'is out of range').replace('Input should be', 'must be')}")
        else:
            parts.append(f"{name} is not valid ({err.get('msg', kind)})")
    return sentence(f"Bad arguments for {tool}: " + "; ".join(dict.fromkeys(parts)))
