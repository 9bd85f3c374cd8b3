"""A calibrated 0-1 relevance per hit: the ranking model's cosine against what the question scores on general knowledge."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np

from indexer import e5
from indexer.notes.textseg import mostly_han
from indexer.retrieval.e5_stage import CROSS_SCRIPT

# e5's cosines crowd into 0.75-0.93 and their level moves with the question (a short Chinese question scores
# every memory ~0.05 higher than an English one), so a raw cosine cannot say "nothing". The question's best
# cosine over these encyclopedia-style sentences (no person, no store's topic) is what an answer that merely
# shares the question's subject reaches; a memory that answers lies above it. On recall-focus-dev the best
# memory of an unrelated question lay -0.056..0.052 (median 0.012) above this level and an answering memory
# -0.03..0.08 (median 0.045).
BACKGROUND = (
    "Canberra is the capital city of Australia.",
    "The Great Wall of China is thousands of kilometres long.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "The Pacific is the largest ocean on Earth.",
    "Shakespeare wrote Hamlet around 1600.",
    "A violin has four strings tuned in fifths.",
    "The French Revolution began in 1789.",
    "Python is a programming language created by Guido van Rossum.",
    "Mount Fuji is the highest mountain in Japan.",
    "The human heart has four chambers.",
    "Light travels at about 300,000 kilometres per second.",
    "To bake bread, knead the dough and let it rise before baking.",
    "北京是中国的首都。",
    "长江是中国最长的河流。",
    "水在标准大气压下一百摄氏度沸腾。",
    "《红楼梦》的作者是曹雪芹。",
    "地球绕太阳一周大约需要三百六十五天。",
    "钢琴有八十八个琴键。",
    "唐朝的都城是长安。",
    "光合作用把阳光、水和二氧化碳变成糖。",
    "珠穆朗玛峰是世界上最高的山峰。",
    "人体最大的器官是皮肤。",
    "做红烧肉要先焯水再炒糖色。",
    "TCP 是一种面向连接的传输层协议。",
)
# relevance = sigmoid((margin - MIDPOINT) / SPREAD): 0.5 where answers and unrelated best memories met on
# recall-focus-dev (margin 0.03), 0.12 at the unrelated median, 0.82 at the answers' median
MIDPOINT = 0.03
SPREAD = 0.01

# a question about the family as a whole gathers the memories naming one of its members; general vocabulary
# of both languages, not any store's words
_FAMILY = re.compile(r"\b(famil(y|ies)|relatives|folks|household)\b|家人|家里人|家庭|亲戚|亲人|全家", re.I)
# the words a family question is widened with, so that every member's memory reaches the pool
MEMBER_WORDS = ("wife husband son daughter children mother mum mom father dad parents brother sister cousin "
                "妻子 太太 老婆 丈夫 老公 儿子 女儿 孩子 父母 爸爸 妈妈 我爸 我妈 哥哥 姐姐 弟弟 妹妹 表哥 表姐 岳父 岳母 公公 婆婆")
_MEMBER_EN = (r"wife|husband|spouse|son|daughter|kids?|child(?:ren)?|mother|mom|mum|father|dad|parents?|brother|"
              r"sister|siblings?|cousin|uncle|aunt|grand(?:ma|pa|mother|father|son|daughter)|nephew|niece|[a-z]+-in-law")
_MEMBER_ZH = (r"妻子|太太|老婆|丈夫|老公|爱人|儿子|女儿|孩子|父母|爸|妈|父亲|母亲|哥哥|姐姐|弟弟|妹妹|兄弟|姐妹|表哥|表姐|"
              r"表弟|表妹|堂哥|堂姐|堂弟|堂妹|岳父|岳母|公公|婆婆|爷爷|奶奶|外公|外婆|姥姥|姥爷|舅舅|姑姑|叔叔|伯伯")
_MEMBER = re.compile(rf"\b(?:{_MEMBER_EN})\b|{_MEMBER_ZH}", re.I)
# "my wife", "我太太": the memory that introduces a relative, before those that only mention one
_OWN = re.compile(rf"\b(?:my|our)\s+(?:{_MEMBER_EN})\b|我们?的?(?:{_MEMBER_ZH})", re.I)

# a question that asks for several things at once (which ones, all, everything, tell me about): general
# question words of both languages
_GATHER = re.compile(r"哪些|都|所有|各种|什么样|情况|\b(all|every(thing|one)?|any(thing)?|tell me about|know about|"
                     r"what are|who are|which ones|things|people|list)\b", re.I)

def asks_family(text: str) -> bool:
    return bool(_FAMILY.search(text))


def gathers(text: str) -> bool:
    """Whether a question asks for everything about something rather than one fact."""
    return bool(_GATHER.search(text)) or bool(_FAMILY.search(text))


def level(qvec: np.ndarray | None, han: bool) -> float | None:
    """The question's best cosine over BACKGROUND (other script: the stage's allowance), or None without the model."""
    bg = e5.background(BACKGROUND)
    if qvec is None or bg is None or not len(bg):
        return None
    cos = bg @ qvec + np.array([CROSS_SCRIPT if mostly_han(t) != han else 0.0 for t in BACKGROUND])
    return float(cos.max())


def of_margin(margin: float) -> float:
    return 1.0 / (1.0 + math.exp(-(margin - MIDPOINT) / SPREAD))


def attach(hits: list, aq, qvec) -> list:
    """Every hit with an e5 cosine gets `relevance` (0-1) and its `margin` over the question's background level;
    a question about the family lifts the memories naming a member to the best one's relevance."""
    if not any(h.signals.get("e5_cosine") is not None for h in hits):
        return hits
    qv = qvec.result() if qvec is not None else e5.query(aq.text)
    base = level(qv, aq.mostly_han)
    if base is None:
        return hits
    han = aq.mostly_han
    margins = [None if h.signals.get("e5_cosine") is None else
               h.signals["e5_cosine"] + (CROSS_SCRIPT if mostly_han(h.content) != han else 0.0) - base for h in hits]
    best = max((m for m in margins if m is not None), default=None)
    family = asks_family(aq.text)
    out = []
    for h, m in zip(hits, margins):
        if m is None:
            out.append(h)
            continue
        member = family and bool(_MEMBER.search(h.content))
        own = member and bool(_OWN.search(h.content))
        if member:
            m = max(m, best, MIDPOINT + SPREAD)
        out.append(replace(h, relevance=round(of_margin(m), 4),
                           signals={**h.signals, "margin": round(m, 6), "member": member, "own_member": own}))
    return out
