"""Designs for a gathering question about its asker (我有哪些…, "what are my…"), compared by bench/recall_designs.py.

Each wraps the default cut and changes only the block of a question about its asker that gathers (relevance.gathers
or an instruction question) and names no relative or role: the hubness-corrected branch's GATHER_GAP cut.
`vecs` maps (store, chunk id) to the hits' e5 passage vectors, as bench/recall_designs.py collects them.

    python bench/recall_gather.py     # how bench/data/recall_apart.json's reading questions read (retrieval/gathering)
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import config, ranking_model  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.notes.textseg import mostly_han  # noqa: E402
from indexer.retrieval import gathering, hubness, relations, relevance  # noqa: E402

# the question's frame, not its topic: interrogatives, the asker, auxiliaries and quantifiers of both languages
_EN_FRAME = re.compile(r"\b(?:what(?:'s)?|which|who|whom|how|tell|me|about|do|does|did|you|know|are|is|am|was|were|"
                       r"my|i|i'm|mine|we|our|us|the|a|an|all|any|some|should|before|to|right|now|have|has|had|"
                       r"on|of|at|in|with|like|there|things?)\b", re.I)
_ZH_FRAME = re.compile(r"我们|咱们|我|咱|都|哪些|哪个|哪种|哪|什么|有|是|的|吗|呢|些|一些|怎么样|了|干|在|喜欢|请问|告诉|说说|身上|手上")


def topic(question: str) -> str:
    """The question less its frame ("我有哪些饮食禁忌？" -> "饮食禁忌", "What are my hobbies?" -> "hobbies")."""
    q = question.strip().rstrip("?？.。!！")
    t = re.sub(r"[，,、]", " ", (_ZH_FRAME if mostly_han(q) else _EN_FRAME).sub(" ", q))
    return " ".join(t.split()) or q


def _gathering(hits, q) -> bool:
    return relevance.about_asker(q) and bool(hubness.scored(hits)) and not any(
        h.signals.get("member") or h.signals.get("role") for h in hits) and (
        relevance.gathers(q) or relations.asks_instructions(q))


def _first_kept(hits, keep: set) -> list:
    kept = [h for h in hits if id(h) in keep]
    return kept if not hits or hits[0] in kept else [hits[0], *kept]  # the ranking's first, as hubness.answering


def topic_scores(hits, q, vecs, k=hubness.K, with_hub=False) -> list:
    """(hit, score) best first: the topic read as a passage, its e5 cosine to each memory less the memory's mean
    cosine to its k nearest background questions' topics (read as passages: both sides in the same space);
    with_hub: plus the question's own corrected score."""
    have = [h for h in hubness.scored(hits) if (h.store, h.id) in vecs]
    if not have:
        return []
    han = mostly_han(q)
    bg = ranking_model.background(tuple(topic(x) for x in (hubness.QUESTIONS_ZH if han else hubness.QUESTIONS_EN)))
    m = np.stack([vecs[(h.store, h.id)] for h in have])
    s = m @ ranking_model.passages([topic(q)])[0] - np.sort(m @ bg.T, axis=1)[:, -k:].mean(axis=1)
    s = s + np.array([h.signals["hub"] for h in have]) if with_hub else s
    return sorted(zip(have, s.tolist()), key=lambda x: -x[1])


def by_topic(base, vecs, gap=0.01, with_hub=False):
    """The gathering question rewritten as its topic and scored passage to passage (topic_scores), cut at `gap`."""
    def cut(hits, q):
        ss = topic_scores(hits, q, vecs, with_hub=with_hub) if _gathering(hits, q) else []
        if not ss:
            return base(hits, q)
        return _first_kept(hits, {id(h) for h, s in ss if s >= ss[0][1] - gap})
    return cut


def by_largest_drop(base, vecs=None, lo=2, hi=8, with_topic=False):
    """A per-question gap: the largest drop between consecutive corrected scores after the first `lo` (to `hi`)."""
    def cut(hits, q):
        if not _gathering(hits, q):
            return base(hits, q)
        ss = topic_scores(hits, q, vecs, with_hub=True) if with_topic else [
            (h, h.signals["hub"]) for h in hubness.scored(hits)]
        ss = ss[:hi + 1]
        drops = [ss[i - 1][1] - ss[i][1] for i in range(lo, len(ss))]
        return _first_kept(hits, {id(h) for h, _ in ss[:lo + int(np.argmax(drops)) if drops else len(ss)]})
    return cut


def by_neighbours(base, vecs, k=5, pool=25):
    """The default block, plus the pool's memories whose CSLS similarity (hubness.memory_csls, over the `pool` best
    corrected memories) to one of its memories is at least the block's mean CSLS similarity among themselves."""
    def cut(hits, q):
        seeds = base(hits, q)
        cand = [h for h in hubness.scored(hits)[:pool] if (h.store, h.id) in vecs]
        index = {id(h): i for i, h in enumerate(cand)}
        si = [index[id(h)] for h in seeds if id(h) in index]
        if not _gathering(hits, q) or len(si) < 2:
            return seeds
        csls = hubness.memory_csls(np.stack([vecs[(h.store, h.id)] for h in cand]),
                                   np.array([mostly_han(h.content) for h in cand]), k)
        floor = float(np.mean([csls[a, b] for a in si for b in si if a != b]))
        return seeds + [h for i, h in enumerate(cand) if i not in si and max(csls[i, b] for b in si) >= floor]
    return cut



_BREADTH: dict = {}  # question -> gathering.breadth (one e5 query per question over all designs)


def breadth(q: str) -> float:
    if q not in _BREADTH:
        _BREADTH[q] = gathering.breadth(ranking_model.query(q))
    return _BREADTH[q]


def _asker_block(hits, q) -> bool:
    return relevance.about_asker(q) and bool(hubness.scored(hits)) and not any(
        h.signals.get("member") or h.signals.get("role") for h in hits)


def gap_cut(hits):
    return hubness.answering(hits, True)


def mad_cut(k=2.0):
    """A gathering block by the pool's own distribution: the memories whose corrected score stands k MADs above
    the pool's median corrected score, less those off the topic (hubness.OFF_TOPIC)."""
    def cut(hits):
        s = np.array([h.signals["hub"] for h in hubness.scored(hits)])
        med = float(np.median(s))
        floor = med + k * float(np.median(np.abs(s - med)))
        return _first_kept(hits, {id(h) for h in hubness.scored(hits) if h.signals["hub"] >= floor and (
            h is hits[0] or h.signals.get("topic_fit", 0) >= hubness.OFF_TOPIC)})
    return cut


def mad_gap(c=1.5):
    """GATHER_GAP scaled to the pool: c MADs of its corrected scores under the best, less those off the topic."""
    def cut(hits):
        s = np.array([h.signals["hub"] for h in hubness.scored(hits)])
        floor = s[0] - c * float(np.median(np.abs(s - np.median(s))))
        return _first_kept(hits, {id(h) for h in hubness.scored(hits) if h.signals["hub"] >= floor and (
            h is hits[0] or h.signals.get("topic_fit", 0) >= hubness.OFF_TOPIC)})
    return cut


def fit_drop(hits, lo=3, hi=8):
    """The largest drop of the corrected score after the first `lo`, among the memories on the topic only."""
    ss = [h for h in hubness.scored(hits) if h.signals.get("topic_fit", -1) >= hubness.OFF_TOPIC][:hi + 1]
    drops = [ss[i - 1].signals["hub"] - ss[i].signals["hub"] for i in range(lo, len(ss))]
    return _first_kept(hits, {id(h) for h in ss[:lo + int(np.argmax(drops)) if drops else len(ss)]})


def by_reading(base, over=None, cut=gap_cut, regex=True):
    """A question about its asker read as gathering by the regex (relevance.gathers, an instruction question) or,
    with `over`, by e5 (gathering.breadth >= over); its block cut by `cut`, any other question's by `base`."""
    def cut_(hits, q):
        if not _asker_block(hits, q):
            return base(hits, q)
        listed = regex and (relevance.gathers(q) or relations.asks_instructions(q))
        if not listed and not (over is not None and breadth(q) >= over):
            return base(hits, q)
        return cut(hits)
    return cut_


APART = Path(__file__).resolve().parent / "data" / "recall_apart.json"


def apart_set(tmp: Path, capture, block):
    """Focus on questions written apart from recall-focus-dev and from gathering's sets (bench/data/recall_apart.json:
    25 memories of one person, 12 broad questions, 6 without a list word, and 12 narrow): pass and precision as
    recall-focus-dev's score.py counts them. capture and block: bench/recall_designs.py's."""
    data = json.loads(APART.read_text(encoding="utf-8"))
    facts = data["memories"]
    home = tmp / "apart"
    (home / "user").mkdir(parents=True)
    (home / "user" / "facts.md").write_text("---\ntype: fact\n---\n\n# Facts\n\n" + "".join(
        f"- 2025-0{1 + i // 9}-1{i % 9}: {t}\n" for i, t in enumerate(facts)), encoding="utf-8")
    with Memory(cfg=config.load(home=home, env={}, recall_cut="relevance", ranking_fill_s=-1)) as mem:
        mem.index()
        pools = capture(mem, [q["query"] for q in data["questions"]])

    def score(design, verbose=False):
        cats, prec = collections.defaultdict(list), []
        for q, pool in zip(data["questions"], pools):
            got = [facts.index(text) if text in facts else -1 for _, _, text in block(design, pool)]
            ok = set(q["relevant"]) <= set(got) and len(got) <= q["max"]
            cats[q["category"]].append(ok)
            if got:
                prec.append(sum(g in q["relevant"] for g in got) / len(got))
            if verbose and not ok:
                print(f"    {q['query']} kept {got} want {q['relevant']}")
        return summary(cats, prec)
    return score


def summary(cats: dict, prec: list, first: list = ()) -> dict:
    """Focus pass overall and per category, the mean precision of the non-empty blocks, and the share of narrow
    blocks opening with an answer (when given)."""
    every = [x for v in cats.values() for x in v]
    out = {"focus": round(sum(every) / len(every), 3), **{k: round(sum(v) / len(v), 3) for k, v in cats.items()},
           "precision": round(sum(prec) / len(prec), 3)}
    return out | ({"narrow first": round(sum(first) / len(first), 3)} if first else {})


def designs(base) -> dict:
    """The rows bench/recall_designs.py measures for gathering (base: the cut before, with its off-topic rule)."""
    return {
        "off topic + gathering read by e5 too, breadth >= 0.03": by_reading(base, 0.03),
        "off topic + gathering read by e5 alone, breadth >= 0.015": by_reading(base, 0.015, regex=False),
        **{f"off topic, gathering cut at median + {k} MAD": by_reading(base, cut=mad_cut(k))
           for k in (1.5, 2, 2.5)},
        "off topic, gathering cut at the largest drop after 3 on topic": by_reading(base, cut=fit_drop),
        "off topic + e5 reading, gathering cut at median + 2 MAD": by_reading(base, 0.02, mad_cut(2)),
        **{f"off topic + e5 reading, gathering gap {c} MAD of the pool": by_reading(base, 0.02,
                                                                                           mad_gap(c)) for c in (1.5, 2)},
        "off topic + gathering read by e5 too, breadth >= 0.02 (default before)": by_reading(base, 0.02),
    }


def main() -> None:
    """How many of recall_apart.json's reading questions (broad, narrow) read as gathering, by e5 and by the regex."""
    reading = json.loads(APART.read_text(encoding="utf-8"))["reading"]
    for kind, qs in reading.items():
        listed = [relevance.gathers(q) or relations.asks_instructions(q) for q in qs]
        for over in (0.02, 0.03):
            e5 = [breadth(q) >= over for q in qs]
            alone = sum(b and not a for a, b in zip(listed, e5))
            print(f"{kind} ({len(qs)}): regex {sum(listed)}, e5 >= {over} {sum(e5)}, either "
                  f"{sum(a or b for a, b in zip(listed, e5))}, e5 without a list word {alone} of {len(qs) - sum(listed)}"
                  f"; highest {max(breadth(q) for q in qs):.3f}")


if __name__ == "__main__":
    main()
