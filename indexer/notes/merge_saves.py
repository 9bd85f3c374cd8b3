"""Merge two saves of one note made from the same text, line by line, so that neither loses a line."""

from __future__ import annotations

from difflib import SequenceMatcher


def merge_saves(base: bytes | None, ours: bytes, theirs: bytes) -> bytes:
    """`ours` and `theirs` were both made from `base`: their changes together.

    Where both changed the same lines, both versions are kept (ours first): a duplicated line can be
    deleted by hand, a lost one cannot be found again. Only a line both left alone can be removed.
    """
    b, o, t = _lines(base), _lines(ours), _lines(theirs)
    out: list[bytes] = []
    zb = zo = zt = 0
    for sb, eb, so, eo, st, et in _stable(b, o, t):
        mid_b, mid_o, mid_t = b[zb:sb], o[zo:so], t[zt:st]
        if mid_o == mid_b:
            out += mid_t
        elif mid_t == mid_b or mid_t == mid_o:
            out += mid_o
        elif mid_o[:len(mid_b)] == mid_b:  # ours only added after these lines (an append): theirs' edit stands
            out += mid_t + mid_o[len(mid_b):]
        elif mid_t[:len(mid_b)] == mid_b:
            out += mid_o + mid_t[len(mid_b):]
        else:
            out += mid_o + [line for line in mid_t if line not in mid_o]
        out += b[sb:eb]
        zb, zo, zt = eb, eo, et
    return b"".join(out)


def _lines(data: bytes | None) -> list[bytes]:
    if data and not data.endswith(b"\n"):
        data += b"\r\n" if b"\r\n" in data else b"\n"  # so an unfinished last line matches itself finished
    return (data or b"").splitlines(keepends=True)


def _stable(b: list[bytes], o: list[bytes], t: list[bytes]):
    """Runs of base lines both sides kept, as (base, ours, theirs) start/end triples, then the end."""
    mo, mt = _blocks(b, o), _blocks(b, t)
    i = j = 0
    while i < len(mo) and j < len(mt):
        bo, oo, no = mo[i]
        bt, tt, nt = mt[j]
        start, end = max(bo, bt), min(bo + no, bt + nt)
        if start < end:
            yield start, end, oo + start - bo, oo + end - bo, tt + start - bt, tt + end - bt
        if bo + no < bt + nt:
            i += 1
        else:
            j += 1
    yield len(b), len(b), len(o), len(o), len(t), len(t)


def _blocks(a: list[bytes], x: list[bytes]) -> list[tuple[int, int, int]]:
    """Matching runs of a and x; the common head and tail are taken first, so a note of 40,000 lines
    with one line added compares its few changed lines, not all of them (whole: seconds per merge)."""
    head = 0
    while head < min(len(a), len(x)) and a[head] == x[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(x)) - head and a[-1 - tail] == x[-1 - tail]:
        tail += 1
    mid = SequenceMatcher(None, a[head:len(a) - tail], x[head:len(x) - tail], autojunk=False).get_matching_blocks()
    runs = [(0, 0, head)] if head else []
    runs += [(i + head, j + head, n) for i, j, n in mid if n]
    if tail:
        runs.append((len(a) - tail, len(x) - tail, tail))
    return runs + [(len(a), len(x), 0)]
