"""A note's top-level blocks (headings, paragraphs, lists and their items) with 0-based line ranges.

Two readers give the same blocks: markdown-it's tokens for any note, and a line scanner for the
plain shape of memory notes (headings, paragraphs, list items with indented continuations) that
reads a 10,000-item note in a fraction of the time. The scanner gives up (None) on anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BLOCK_OPEN = {"paragraph_open", "fence", "code_block", "html_block", "hr", "table_open",
              "blockquote_open", "bullet_list_open", "ordered_list_open"}


@dataclass(frozen=True)
class Block:
    """Lines [start, end) of one top-level block; a list also has its items' ranges."""

    start: int
    end: int
    kind: str  # "heading", "list" or "block"
    level: int = 0
    title: str = ""
    items: tuple[tuple[int, int], ...] = ()


def from_tokens(tokens, offset: int) -> list[Block]:
    out = []
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None:
            continue
        start, end = tok.map[0] + offset, tok.map[1] + offset
        if tok.type == "heading_open":
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            out.append(Block(start, end, "heading", int(tok.tag[1]), title))
        elif tok.type.endswith("list_open"):
            out.append(Block(start, end, "list", items=tuple(_child_ranges(tokens, i, offset))))
        elif tok.type in BLOCK_OPEN:
            out.append(Block(start, end, "block"))
    return out


def _child_ranges(tokens, i, offset):
    """Line ranges of a list's direct items."""
    depth, out = tokens[i].level, []
    for tok in tokens[i + 1:]:
        if tok.level == depth and tok.nesting == -1:
            break
        if tok.type == "list_item_open" and tok.level == depth + 1 and tok.map:
            out.append((tok.map[0] + offset, tok.map[1] + offset))
    return out


_ITEM = re.compile(r"(?:([-*+])|\d{1,9}([.)]))( {1,4})(?=\S)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
# what the scanner leaves to markdown-it: fences, quotes, tables, HTML, rules, setext underlines,
# link definitions, tabs and indented code
_UNSAFE = re.compile(r"\s*(?:```|~~~|>|\||<)|.*\t|\s*\[[^\]]*\]:|\s{0,3}([-*_=])(?:\s*\1){2,}\s*$|\s{0,3}=+\s*$|\s{0,3}-+\s*$")


def scan(lines: list[str], offset: int) -> list[Block] | None:
    """Blocks of a note in the plain memory-note shape, or None where markdown-it must decide."""
    out: list[Block] = []
    n, i = len(lines), offset
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
        elif _UNSAFE.match(line):
            return None
        elif _HEADING.match(line):
            m = _HEADING.match(line)
            out.append(Block(i, i + 1, "heading", len(m.group(1)), (m.group(2) or "").strip()))
            i += 1
        elif _ITEM.match(line):
            block = _scan_list(lines, i)
            if block is None:
                return None
            out.append(block)
            i = block.end
        elif line.startswith("    "):
            return None  # indented code
        else:
            start = i
            while i < n and lines[i].strip():
                if _UNSAFE.match(lines[i]) or _ITEM.match(lines[i]) or lines[i].startswith(" "):
                    return None  # a list or rule interrupting a paragraph: markdown-it's rules decide
                if _HEADING.match(lines[i]):
                    break
                i += 1
            out.append(Block(start, i, "block"))
    return out


def _scan_list(lines: list[str], i: int) -> Block | None:
    n, start, items = len(lines), i, []
    marker = _marker(_ITEM.match(lines[i]))
    while i < n and _ITEM.match(lines[i]) and _marker(_ITEM.match(lines[i])) == marker:
        m = _ITEM.match(lines[i])
        width = m.end()  # continuation lines are indented at least this far
        s = i
        i += 1
        while i < n:
            line = lines[i]
            if not line.strip():
                j = i
                while j < n and not lines[j].strip():
                    j += 1
                if j < n and _indent(lines[j]) >= width:
                    i = j
                    continue
                break
            indent = _indent(line)
            if "\t" in line[:indent + 1] or line.lstrip().startswith(("```", "~~~")):
                return None
            if indent >= width:
                i += 1
                continue
            if indent > 0 or _ITEM.match(line) or _HEADING.match(line) or _UNSAFE.match(line):
                if indent > 0 or _UNSAFE.match(line):
                    return None  # a half-indented line or a rule: leave it to markdown-it
                break
            if not lines[i - 1].strip():
                break
            i += 1  # lazy continuation of the item's paragraph
        items.append((s, i))
        j = i
        while j < n and not lines[j].strip():
            j += 1
        if j < n and _ITEM.match(lines[j]) and _marker(_ITEM.match(lines[j])) == marker:
            i = j
            continue
        break
    end = items[-1][1]
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return Block(start, end, "list", items=tuple(items))


def _marker(m) -> str:
    """Another bullet character or ordered delimiter starts another list."""
    return m.group(1) or m.group(2)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
