"""Split a Markdown note into heading-aware chunks with exact 1-based line ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from markdown_it import MarkdownIt

from indexer import memo
from indexer.errors import NoteError
from indexer.notes.frontmatter import split_front_matter
from indexer.models import Caveat, Chunk, Note
from indexer.notes import blocks
from indexer.notes.memory_items import is_dated_item, is_memory_note, item_meta, journal_day
from indexer.notes.textseg import count_tokens, cut_by_tokens

# Bump when chunk boundaries change: stored chunk ids would no longer match.
CHUNKER_VERSION = "md-blocks-7-lead-ins"  # 6: aliases searched, procedures whole; 7: a colon lead-in joins its procedure
MIN_STANDALONE_CHARS = 20

# block structure is all the chunker reads: inline parsing (emphasis, links) would only cost time
_NUMBERED = re.compile(r"^\s{0,3}\d{1,9}[.)]\s")
_MD = MarkdownIt("commonmark").enable("table").disable("inline")
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.:])(?=\s)")
_TYPE_BY_DIR = {"user": "preference", "journal": "episodic", "agent": "decision"}


@dataclass
class _Piece:
    """A run of source lines [start, end) 0-based, or part of one line when `text` is set."""

    start: int
    end: int
    section: str
    is_heading: bool = False
    text: str | None = None
    record: bool = False  # one memory: a top-level list item of a memory note, never merged
    alone: bool = False  # a procedure in a memory note: one section of its own, never merged either
    tokens: int | None = None  # token count of the whole lines, when already known


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_note(text: str, uri: str, target_tokens: int = 220, max_tokens: int = 400) -> Note:
    """Parse a note's text (already decoded) into a Note with its chunks; NoteError if it cannot be."""
    try:
        return _parse_note(text, uri, target_tokens, max_tokens)
    except NoteError:
        raise
    except Exception as exc:  # parsing writes nothing, so a note the chunker cannot handle skips only itself
        why = (str(exc).splitlines() or [""])[0][:200]
        raise NoteError(f"{uri}: could not be chunked ({type(exc).__name__}: {why}); the note is left as it is "
                        "and not indexed, please report it with the note attached") from exc


def _parse_note(text: str, uri: str, target_tokens: int, max_tokens: int) -> Note:
    text = normalise_newlines(text).lstrip("\ufeff")
    fm, fm_lines = split_front_matter(text)
    lines = text.split("\n")
    found, memory, day = _note_blocks(lines, fm_lines, fm.type, uri)
    pieces = list(_pieces(found, lines, max_tokens, memory, day))
    chunks = _assemble(pieces, lines, uri, target_tokens, max_tokens, day or fm.date)
    if fm.aliases:  # the note's other names are searched with every piece of it (the section is indexed)
        also = f"(aliases: {', '.join(fm.aliases)})"
        chunks = [replace(c, section=f"{c.section} {also}".strip()) for c in chunks]
    parent_dir = uri.split("/", 1)[0] if "/" in uri else ""
    evergreen = fm.evergreen if fm.evergreen is not None else parent_dir == "user"
    return Note(
        uri=uri, parent_dir=parent_dir,
        type=fm.type or _TYPE_BY_DIR.get(parent_dir, "note"),
        importance=fm.importance or 3, evergreen=evergreen, tags=fm.tags,
        chunks=tuple(_unique(chunks)), warnings=_caveats(uri, fm),
    )


def _caveats(uri: str, fm) -> tuple[Caveat, ...]:
    """What the note's front matter did not give as written: the note is indexed all the same."""
    if fm.problem:
        return (Caveat(f"{uri}: {fm.problem}; indexed without it", "front_matter_ignored"),)
    return tuple(Caveat(f"{uri}: front matter {what}", "front_matter_adjusted") for what in fm.adjusted)


def _unique(chunks: list[Chunk]) -> list[Chunk]:
    """A line cut into identical parts ("ha ha ha ...") gives equal ids: one copy is enough
    (two would break the id key). Chunks of only whitespace (e.g. NBSP) are dropped."""
    seen: set[str] = set()
    return [c for c in chunks if c.content.strip() and not (c.id in seen or seen.add(c.id))]


def _note_blocks(lines: list[str], offset: int, note_type: str | None, uri: str):
    """(blocks, is a memory note, the journal's day): the scanner's blocks when it can read a memory
    note, else markdown-it's (documents keep exactly the chunks they always had)."""
    fast = blocks.scan(lines, offset)
    if fast is not None:
        day, memory = _memory_kind(fast, lines, note_type, uri)
        if memory:
            return fast, memory, day
    found = blocks.from_tokens(_MD.parse("\n".join(lines[offset:])), offset)
    return (found, *reversed(_memory_kind(found, lines, note_type, uri)))


def _memory_kind(found, lines, note_type, uri) -> tuple[str | None, bool]:
    day = journal_day(uri, next((b.title for b in found if b.kind == "heading"), None))
    return day, is_memory_note(note_type, [lines[s] for b in found for s, _e in b.items], day)


def _pieces(found: list[blocks.Block], lines: list[str], max_tokens: int, memory: bool, day: str | None = None):
    """Yield pieces in document order: headings, then blocks split to fit max_tokens; in a memory
    note each top-level list item is a record of its own, except the steps of a procedure."""
    stack: list[tuple[int, str]] = []
    for b in found:
        if b.kind == "heading":
            stack = [(lv, t) for lv, t in stack if lv < b.level] + [(b.level, b.title)]
            yield _Piece(b.start, b.end, _crumb(stack), is_heading=True)
        elif memory and b.items and _procedure(lines, b.items, day):
            for p in _split_block(lines, b.start, b.end, _crumb(stack), list(b.items), max_tokens):
                p.alone = True
                yield p
        elif memory and b.items:
            yield from _records(lines, b.items, _crumb(stack), max_tokens)
        else:
            yield from _split_block(lines, b.start, b.end, _crumb(stack), list(b.items), max_tokens)


def _procedure(lines, items, day: str | None) -> bool:
    """A numbered list none of whose items carries a date is one procedure (a checklist's steps mean
    something only together, under their heading), not a list of memories: it is one section of its
    own (its heading lives on in the section), apart from the paragraphs around it."""
    return all(_NUMBERED.match(lines[s]) and not is_dated_item(lines[s], day) for s, _e in items)


def _crumb(stack) -> str:
    return " > ".join(t for _, t in stack if t)


def _records(lines, items, section, max_tokens):
    """One record per list item with its continuation lines and sub-items (a long one in parts)."""
    for s, e in items:
        while e - 1 > s and not lines[e - 1].strip():
            e -= 1  # a loose list's blank line belongs to no item
        for p in _split_block(lines, s, e, section, [], max_tokens, remember=True):
            p.record = True
            yield p


@memo.pure(16384)  # a 10,000-item memory note fits; at most about 30 MB of texts
def _count_short(text: str) -> int:
    return count_tokens(text)


def _split_block(lines, start, end, section, items, max_tokens, remember: bool = False):
    text = "\n".join(lines[start:end])
    # a daemon re-reads a memory note on every edit: its items' counts are remembered. Other
    # blocks are not: a 10,000-file build kept 65,536 paragraphs alive (33 MB of its peak) for nothing
    size = _count_short(text) if remember and len(text) < 1000 else count_tokens(text)
    if size <= max_tokens:
        yield _Piece(start, end, section, tokens=size)
        return
    # Prefer list items, then single lines, then sentences inside one long line.
    ranges = items or [(n, n + 1) for n in range(start, end)]
    for s, e in ranges:
        if e - s > 1 and count_tokens("\n".join(lines[s:e])) > max_tokens:
            yield from _split_block(lines, s, e, section, [], max_tokens)
        elif e - s == 1 and count_tokens(lines[s]) > max_tokens:
            for part in _split_line(lines[s], max_tokens):
                yield _Piece(s, s + 1, section, text=part)
        elif "".join(lines[s:e]).strip():
            yield _Piece(s, e, section)


def _split_line(line: str, max_tokens: int) -> list[str]:
    """Split one long line at sentence ends (then hard) into parts of at most max_tokens."""
    sentences = [s for s in _SENTENCE_END.split(line) if s]
    # counts are kept running: re-counting the growing text made a 1 MB line take a minute
    parts, cur, cur_tokens = [], "", 0
    for sent in sentences:
        n = count_tokens(sent)
        if n > max_tokens:  # a "sentence" with no end mark at all: cut it between tokens
            if cur:
                parts.append(cur)
                cur, cur_tokens = "", 0
            *whole, sent = cut_by_tokens(sent, max_tokens)
            parts.extend(whole)
            n = count_tokens(sent)
        if cur and cur_tokens + n > max_tokens:
            parts.append(cur)
            cur, cur_tokens = "", 0
        cur += sent
        cur_tokens += n
    if cur:
        parts.append(cur)
    return [p for p in parts if p.strip()] or [line]


def _assemble(pieces: list[_Piece], lines: list[str], uri: str, target: int, limit: int,
              day: str | None) -> list[Chunk]:
    """Merge pieces up to `target` tokens; a heading starts a chunk and never ends one.

    A block ending in a colon introduces the next one ("two causes:" + the list), so the
    two stay together up to `limit` tokens. A record stands alone; the headings above it
    live on in its section.
    """
    groups: list[list[_Piece]] = []
    cur: list[_Piece] = []
    cur_tokens = 0
    for p in pieces:
        if p.alone and _introduces(cur, lines) and cur_tokens + _piece_tokens(p, lines) <= limit:
            groups.append(cur + [p])  # "two causes:" + the numbered causes: the words of the question are in the
            cur, cur_tokens = [], 0  # lead-in and heading, the answer in the list (the demo's cause ranked 17th)
            continue
        if p.record or p.alone:
            if any(not q.is_heading for q in cur):
                groups.append(cur)
            groups.append([p])
            cur, cur_tokens = [], 0
            continue
        ptoks = _piece_tokens(p, lines)
        has_body = any(not q.is_heading for q in cur)
        partial_switch = cur and (p.text is not None or cur[-1].text is not None) and (
            p.text is None or cur[-1].text is None or p.start != cur[-1].start)
        introduces = _introduces(cur, lines)
        over = cur_tokens + ptoks > (limit if introduces else target)
        if cur and has_body and (p.is_heading or over or partial_switch):
            groups.append(cur)
            cur, cur_tokens = [], 0
        cur.append(p)
        cur_tokens += ptoks
    if cur:
        groups.append(cur)
    groups = _absorb_small(groups, lines, limit)
    return [_make_chunk(g, lines, uri, day) for g in groups]


def _introduces(cur: list[_Piece], lines) -> bool:
    """The group so far ends with a whole block ending in a colon: it introduces what follows."""
    return bool(cur) and cur[-1].text is None and not cur[-1].is_heading and \
        _piece_text(cur[-1], lines).rstrip().endswith((":", "："))


def _absorb_small(groups, lines, limit):
    """Blocks under MIN_STANDALONE_CHARS join the previous chunk instead of standing alone,
    up to `limit` tokens (else 10k tiny sections would make one giant chunk)."""
    out: list[list[_Piece]] = []
    sizes: list[int] = []
    for g in groups:
        if g[0].record or g[0].alone:
            out.append(g)
            sizes.append(0)  # a record neither joins nor takes in another chunk
            continue
        text = "".join(_piece_text(p, lines) for p in g if not p.is_heading).strip()
        size = sum(_piece_tokens(p, lines) for p in g)
        if (out and len(text) < MIN_STANDALONE_CHARS and g[0].text is None and out[-1][-1].text is None
                and not (out[-1][0].record or out[-1][0].alone) and sizes[-1] + size <= limit):
            out[-1] = out[-1] + g
            sizes[-1] += size
        else:
            out.append(g)
            sizes.append(size)
    return out


def _piece_text(p: _Piece, lines) -> str:
    return p.text if p.text is not None else "\n".join(lines[p.start:p.end])


def _piece_tokens(p: _Piece, lines) -> int:
    """A piece's token count, counted once: grouping and absorbing ask again for every piece."""
    if p.text is not None:
        return count_tokens(p.text)
    if p.tokens is None:
        p.tokens = count_tokens("\n".join(lines[p.start:p.end]))
    return p.tokens


def _make_chunk(group: list[_Piece], lines, uri, day: str | None) -> Chunk:
    first, last = group[0], group[-1]
    partial = [p for p in group if p.text is not None]
    if first.text is not None:
        content = "".join(p.text for p in group)
    elif partial:  # heading lines followed by the first part of a long line
        content = "\n".join(lines[first.start:partial[0].start]) + "".join(p.text for p in partial)
    else:
        content = "\n".join(lines[first.start:last.end]).rstrip()
    body = next((p for p in group if not p.is_heading), first)
    extra = {"date": day}
    if first.record:
        meta = item_meta(content, day)
        extra = {"kind": "memory", "date": meta.date, "tags": meta.tags, "importance": meta.importance,
                 "type": meta.type}
    return Chunk(uri=uri, start_line=first.start + 1, end_line=_last_line(first, last, lines),
                 content=content, section=body.section, token_count=_count(group, content), **extra)


def _count(group: list[_Piece], content: str) -> int:
    known = group[0].tokens if len(group) == 1 and group[0].text is None else None
    return count_tokens(content) if known is None else known  # trailing blanks hold no tokens


def _last_line(first, last, lines) -> int:
    if first.text is not None or last.text is not None:
        return last.start + 1
    end = last.end
    while end - 1 > first.start and not lines[end - 1].strip():
        end -= 1  # markdown-it maps can include trailing blank lines
    return end
