"""Whether a memory's text holds what a person named: Latin-script words whole and in any case, Chinese as written."""

from __future__ import annotations

import re

from indexer.errors import InputError

# Han, kana and hangul are written without spaces between words: a run of them is matched as written (香菜
# inside 我不吃香菜。); every other script is matched word by word, so `cat` never matches `cats` or `catalog`
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(_CJK.sub(" ", text.replace("\u2019", "'")))]


def needles(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(words, runs): the text's Latin-script words, case-folded, and its Chinese (CJK) runs as written."""
    words, runs = tuple(dict.fromkeys(_words(text))), tuple(dict.fromkeys(_CJK.findall(text)))
    if not words and not runs:
        raise InputError(f"{text[:40]!r} holds no word to look for; name words the memories hold, e.g. \"old phone "
                         "number\" or 香菜")
    return words, runs


def holds(text: str, words: tuple[str, ...], runs: tuple[str, ...]) -> bool:
    """Every word of the needle is a whole word of text (any case) and every Chinese run is in it as written."""
    if any(run not in text for run in runs):
        return False
    have = set(_words(text))
    return all(w in have for w in words)


def prefilter(words: tuple[str, ...], runs: tuple[str, ...]) -> list[str]:
    """Parts SQLite's instr(lower(content), ?) can look for: ASCII words (its lower() folds only ASCII) and runs."""
    return [w for w in words if w.isascii()] + list(runs)
