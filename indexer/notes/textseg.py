"""Word segmentation for Chinese and English: FTS tokens, query terms, token counts."""

from __future__ import annotations

import re
from typing import Iterator

from indexer import memo


# Bump when document tokens change: an index built with other tokens must be rebuilt.
TOKENIZER_VERSION = "jieba-colocated-1"

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA_HANGUL = "\u3040-\u30ff\uac00-\ud7af"
# A run of Han characters, a single kana/hangul character, or a word of letters/digits.
_RUN = re.compile(rf"([{_HAN}]+)|([{_KANA_HANGUL}])|([^\W_{_HAN}{_KANA_HANGUL}]+(?:[._'][^\W_{_HAN}{_KANA_HANGUL}]+)*)")
_SUBWORD = re.compile(r"[^\W_]+")
_ALL_HAN = re.compile(f"[{_HAN}]+")

_EN_STOP = frozenset(
    "a an and are as at be been but by did do does for from had has have how i if in into is it "
    "its me my of on or our so that the their them then there these they this to was we were "
    "what when where which who whom why will with would you your".split()
)
_ZH_STOP = frozenset("的 了 是 在 和 与 及 吗 呢 吧 啊 呀 哪些 什么 怎么 怎样 哪个 哪 谁 几 多少 为什么 如何 有 也 都 就 这 那 把 被 对 "
                      "我 你 他 她 它 我们 你们 他们 她们 请问 一下".split())


def _rjieba():
    """rjieba reads its dictionary when imported (0.13 s or more): only text with Chinese pays for it."""
    import rjieba
    return rjieba


@memo.pure(65536)
def _han_expansions(word: str) -> tuple[str, ...]:
    """The word, its search sub-words and its single characters, deduplicated."""
    out = [word]
    if len(word) > 1:
        for sub in _rjieba().cut_for_search(word):
            if sub not in out:
                out.append(sub)
        for ch in word:
            if ch not in out:
                out.append(ch)
    return tuple(out)


def _fold(word: str) -> str:
    return word.casefold()


def document_tokens(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, tokens) per position: Han words carry sub-words and characters colocated."""
    # a list built in one loop: this runs for every word of every note a build writes
    out = []
    add = out.append
    for m in _RUN.finditer(text):
        han, single, word = m.groups()
        if word:
            if word.isalnum():  # no "." or "'" inside: one part, the usual case
                add((m.start(), m.end(), (word.casefold(),)))
            else:
                out.extend(_word_tokens(word, m.start()))
        elif han:
            pos = m.start()
            for w in _rjieba().cut(han):
                add((pos, pos + len(w), _han_expansions(w)))
                pos += len(w)
        else:
            add((m.start(), m.end(), (single,)))
    return out


def _word_tokens(word: str, offset: int) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    parts = list(_SUBWORD.finditer(word))
    if len(parts) == 1:
        yield offset, offset + len(word), (_fold(word),)
        return
    # "node.js" / "don't" / "v1.2": the parts are searchable, the joined form too.
    first = True
    for p in parts:
        toks = (_fold(p.group()), _fold(word)) if first else (_fold(p.group()),)
        first = False
        yield offset + p.start(), offset + p.end(), toks


def query_tokens(text: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """Tokens of a query term: whole words only, as rjieba.cut gives them."""
    for m in _RUN.finditer(text):
        han, single, word = m.groups()
        if han:
            pos = m.start()
            for w in _rjieba().cut(han):
                yield pos, pos + len(w), (w,)
                pos += len(w)
        elif single:
            yield m.start(), m.end(), (single,)
        else:
            for p in _SUBWORD.finditer(word):
                yield m.start() + p.start(), m.start() + p.end(), (_fold(p.group()),)


def query_terms(text: str, drop_stopwords: bool = True) -> list[str]:
    """Distinct search terms of free text, in order; stopwords go unless nothing else is left."""
    terms: list[str] = []
    for _s, _e, toks in query_tokens(text):
        if toks[0] not in terms:
            terms.append(toks[0])
    if not drop_stopwords:
        return terms
    kept = [t for t in terms if not is_stopword(t)]
    return kept or terms


def stopwords() -> frozenset[str]:
    """The function words is_stopword drops (besides lone Latin letters and digits)."""
    return _EN_STOP | _ZH_STOP


@memo.pure(1 << 16)  # called for every word of every feedback document, on a few thousand distinct words
def is_stopword(word: str) -> bool:
    """Function words of either language, and lone latin letters ("s" of "Chen's", "t" of "don't"),
    which match nearly every English note."""
    w = _fold(word)
    return w in _EN_STOP or w in _ZH_STOP or (len(w) == 1 and w.isascii())


MAX_QUERY_TERMS = 64


def fts_match_expression(text: str, max_terms: int = MAX_QUERY_TERMS, unindexed=frozenset()) -> str:
    """An FTS5 MATCH string that can never be a syntax error: quoted terms, OR-joined.

    A Chinese word in `unindexed` (no note holds it as a token) is searched as the phrase of its
    characters instead: jieba may have cut a note's `很好用` into 很/好/用, so `好用` was never a token
    there, but its characters stand side by side."""
    return match_terms(query_terms(text)[:max_terms], unindexed)


def match_terms(terms, unindexed=frozenset()) -> str:
    """fts_match_expression for words already taken from a query (see there)."""
    return match_any([han_phrase(t) if t in unindexed else t for t in terms])


def han_words(terms) -> list[str]:
    """The terms that are Chinese words of two or more characters (the ones a phrase can stand in for)."""
    return [t for t in terms if len(t) > 1 and _ALL_HAN.fullmatch(t)]


def han_phrase(word: str) -> str:
    """The word's characters as one FTS5 phrase: each a token, in order, at consecutive positions."""
    return " ".join(word)


def match_any(words) -> str:
    """An FTS5 MATCH string for any of the words, each quoted so it is only ever text."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def has_han(text: str) -> bool:
    return re.search(f"[{_HAN}]", text) is not None


_HAN_CHAR = re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")
_LATIN = re.compile("[A-Za-z]")


def mostly_han(text: str) -> bool:
    """Chinese text rather than text with a Chinese name in it: a Han character carries about as much
    as a word of three Latin letters."""
    # counted by regex in C: a loop over the characters cost 3 ms a search (30 hits of the ranking stage)
    han = len(_HAN_CHAR.findall(text))
    latin = len(_LATIN.findall(text))
    return han > 0 and han * 3 >= latin


_COUNT = re.compile(rf"[{_HAN}{_KANA_HANGUL}]|[^\W_{_HAN}{_KANA_HANGUL}]+|[^\s\w]")


def _weight(s: str) -> int:
    if s[0].isalnum() and len(s) > 1:
        return 1 + (len(s) - 1) // 6  # long words split into several word pieces
    return 1


_LONG_WORD = re.compile(rf"[^\W_{_HAN}{_KANA_HANGUL}]{{7,}}")


def count_tokens(text: str) -> int:
    """Model-style token estimate: a CJK character is one, a word about 1.3, punctuation one."""
    # the same sum as _weight over _COUNT's matches, without a Python call per match: every match
    # is one, and only words of 7+ characters weigh more (a 4 MB note of punctuation took 35 s)
    return _COUNT.subn("", text)[1] + sum((len(w) - 1) // 6 for w in _LONG_WORD.findall(text))


def cut_by_tokens(text: str, max_tokens: int) -> list[str]:
    """Cut text into consecutive parts of at most max_tokens each, in one pass; "".join(parts) == text."""
    max_tokens = max(1, max_tokens)
    word_cap = 6 * (max_tokens - 1) + 1  # the longest word weighing max_tokens
    parts, start, n = [], 0, 0
    for m in _COUNT.finditer(text):
        s, pos = m.group(), m.start()
        while _weight(s) > max_tokens:  # one giant word: cut it by characters
            if pos > start:
                parts.append(text[start:pos])
            parts.append(text[pos:pos + word_cap])
            pos += word_cap
            start, n, s = pos, 0, s[word_cap:]
        if not s:
            continue
        if n + _weight(s) > max_tokens and pos > start:
            parts.append(text[start:pos])
            start, n = pos, 0
        n += _weight(s)
    if start < len(text):
        parts.append(text[start:])
    return parts
