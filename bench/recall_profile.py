"""Recall's cut read through profiles over the background questions (second-order similarity), measured as rows of
bench/recall_designs.py; run alone it prints where each recall-focus-dev question's answers rank by the corrected
score and by profile similarity.

A text's profile is its e5 cosine to each of hubness.py's background questions, English and Chinese together (they
ask about the same topics, so a memory of either script lands on both halves). Each background question is centred
by its mean over the pool (the question's profile: by the background questions' mean cosine to each other), each
language half by the text's own mean (e5 puts a text nearer the questions of its own script). Two readings:
"corr", the correlation of the two whole profiles; "top k", the memory's mean (column-scaled) profile over the k
background questions nearest the question (a free-time question is near those about sports, instruments, books).

Measured (docs/BENCHMARKS.md, "Recall focus, designs compared"; recall-focus-dev pass / precision, default 0.800 /
0.671, apart 0.625 / 0.768; zh memories and locomo-facts-dev unchanged by every row): the best, a gathering block
cut 3 robust z under the best of corrected z + 2 x profile z (top 20), 0.800 / 0.683, apart 0.625 / 0.830; its
neighbours (weight 1-3, gap 2-4, top 10-30) 0.733-0.800, apart pass 0.583-0.667: a lucky point, not kept. Every
other reading is at most the default's pass (expanded: 0.778 / 0.629, apart 0.667 / 0.767, a mixed result). The missed broad answers rank 8th-23rd by profile as by the corrected
score: a profile reads a topic (an allergy lies near illnesses and food), not what links a memory to the question.

    python bench/recall_profile.py [--eval-dir ../shared/eval]
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import ranking_model  # noqa: E402
from indexer.notes.textseg import mostly_han  # noqa: E402
from indexer.retrieval import gathering, hubness, relations, relevance  # noqa: E402
import recall_gather as rg  # noqa: E402

_MORE = gathering.BROAD + gathering.NARROW
_MORE_EN = tuple(x for x in _MORE if not mostly_han(x))
_MORE_ZH = tuple(x for x in _MORE if mostly_han(x))
_Q: dict = {}  # question -> its e5 query vector (one per question over all designs)


def _rows(c: np.ndarray, centre: np.ndarray, n: int, unit: bool = True) -> np.ndarray:
    """Columns less `centre`, each language half (the first n columns English) less its row mean, rows scaled to
    unit length (unit)."""
    c = c - centre
    c[:, :n] -= c[:, :n].mean(axis=1, keepdims=True)
    c[:, n:] -= c[:, n:].mean(axis=1, keepdims=True)
    return c / (np.linalg.norm(c, axis=1, keepdims=True) + 1e-9) if unit else c


def _background(more: bool = False):
    """(the English then the Chinese background questions' vectors, how many are English); (None, 0) without e5."""
    en = ranking_model.background(hubness.QUESTIONS_EN + (_MORE_EN if more else ()), role="query")
    zh = ranking_model.background(hubness.QUESTIONS_ZH + (_MORE_ZH if more else ()), role="query")
    return (None, 0) if en is None or zh is None else (np.vstack([en, zh]), len(en))


def similarity(qvec: np.ndarray, mvecs: np.ndarray, k: int = 0, more: bool = False,
               overlap: bool = False) -> np.ndarray | None:
    """Each memory's profile similarity to the question: the correlation (k 0) or its mean over the question's k
    nearest background questions, each column scaled by its spread over the pool; more: gathering.py's 100
    broad and narrow questions join the background questions (English ones to the English half); overlap: the share
    of the question's k nearest background questions among the memory's k nearest (its mean breaks ties)."""
    bg, n = _background(more)
    if bg is None or qvec is None or not len(mvecs):
        return None
    m, qq = mvecs @ bg.T, bg @ bg.T
    np.fill_diagonal(qq, np.nan)
    q = _rows((qvec @ bg.T)[None, :], np.nanmean(qq, axis=0), n)[0]
    if not k:
        return _rows(m, m.mean(axis=0), n) @ q
    c = _rows(m / (m.std(axis=0) + 1e-9), (m / (m.std(axis=0) + 1e-9)).mean(axis=0), n, unit=False)
    top = np.argsort(-q)[:k]
    if not overlap:
        return c[:, top].mean(axis=1)
    return np.isin(np.argsort(-c, axis=1)[:, :k], top).mean(axis=1) + 1e-3 * c[:, top].mean(axis=1)


def memory_profiles(mvecs: np.ndarray) -> np.ndarray | None:
    """The memories' profile correlations with each other (diagonal NaN), columns centred over these memories."""
    bg, n = _background()
    if bg is None or not len(mvecs):
        return None
    m = mvecs @ bg.T
    p = _rows(m, m.mean(axis=0), n)
    out = p @ p.T
    np.fill_diagonal(out, np.nan)
    return out


def qvec(q: str):
    if q not in _Q:
        _Q[q] = ranking_model.query(q)
    return _Q[q]


def expanded(qvec: np.ndarray, mvecs: np.ndarray, k: int = 5) -> np.ndarray | None:
    """The question expanded into its k nearest background questions of each language: each memory's best corrected
    cosine (hubness.py's level) to one of them (a free-time question's "Which instrument am I learning?" finds the
    cello lesson even when the question itself does not)."""
    bg, n = _background()
    if bg is None or qvec is None or not len(mvecs):
        return None
    qs, m = bg @ qvec, mvecs @ bg.T
    top = np.concatenate([np.argsort(-qs[:n])[:k], n + np.argsort(-qs[n:])[:k]])
    return (m - np.sort(m, axis=1)[:, -hubness.K:].mean(axis=1, keepdims=True))[:, top].max(axis=1)


def sims(hits, q, vecs, k=0, more=False, overlap=False) -> dict:
    """id(hit) -> profile similarity to the question (k < 0: expanded into -k questions), for the pool's scored
    hits with a vector."""
    have = [h for h in hubness.scored(hits) if (h.store, h.id) in vecs]
    mv = np.stack([vecs[(h.store, h.id)] for h in have]) if have else None
    s = None if mv is None else expanded(qvec(q), mv, -k) if k < 0 else similarity(qvec(q), mv, k, more, overlap)
    return {} if s is None else {id(h): float(v) for h, v in zip(have, s)}


def _z(x: np.ndarray) -> np.ndarray:
    """Robust z-scores: distance from the pool's median in MADs."""
    med = np.median(x)
    return (x - med) / (np.median(np.abs(x - med)) + 1e-9)


def blended(hits, q, vecs, w=1.0, k=0, more=False, overlap=False) -> list:
    """(hit, score) best first: the corrected score's robust z plus w times the profile similarity's (w None: the
    profile's alone)."""
    sc = [h for h in hubness.scored(hits) if (h.store, h.id) in vecs]
    s = sims(sc, q, vecs, k, more, overlap)
    if not s:
        return []
    p = _z(np.array([s[id(h)] for h in sc]))
    z = p if w is None else _z(np.array([h.signals["hub"] for h in sc])) + w * p
    return sorted(zip(sc, z.tolist()), key=lambda x: -x[1])


def _gathering(hits, q) -> bool:
    return rg._asker_block(hits, q) and (relevance.gathers(q) or relations.asks_instructions(q) or rg.breadth(
        q) >= 0.02)


def by_profile(base, vecs, w=2.0, gap=3.0, k=20, more=False, overlap=False):
    """(a) A question about its asker read as gathering: the pool's memories within `gap` (robust z) of the best
    blended score, less those hubness.OFF_TOPIC sets aside; the ranking's first stays. Any other: `base`."""

    def cut(hits, q):
        ss = blended(hits, q, vecs, w, k, more, overlap) if _gathering(hits, q) else []
        if not ss:
            return base(hits, q)
        return rg._first_kept(hits, {id(h) for h, z in ss if z >= ss[0][1] - gap and (
            h is hits[0] or h.signals.get("topic_fit", 0) >= hubness.OFF_TOPIC)})
    return cut


def by_fit(base, vecs, level=0.0, also=True, pool=30):
    """(a) A gathering question about its asker: the default gathering cut (hubness.answering), less the memories
    whose mean profile correlation to the other nine of the 10 best corrected memories (computed over the `pool`
    best) lies under `level`; also: on top of hubness.OFF_TOPIC, else instead of it."""

    def cut(hits, q):
        if not _gathering(hits, q):
            return base(hits, q)
        cand = [h for h in hubness.scored(hits)[:pool] if (h.store, h.id) in vecs]
        sim = memory_profiles(np.stack([vecs[(h.store, h.id)] for h in cand])) if len(cand) >= 3 else None
        if sim is None:
            return base(hits, q)
        fit = dict(zip(map(id, cand[:hubness.TOPIC_TOP]), np.nanmean(sim[:hubness.TOPIC_TOP, :hubness.TOPIC_TOP], 1)))
        old, hubness.OFF_TOPIC = hubness.OFF_TOPIC, hubness.OFF_TOPIC if also else -np.inf
        try:
            kept = hubness.answering(hits, True)
        finally:
            hubness.OFF_TOPIC = old
        return rg._first_kept(hits, {id(h) for h in kept if h is hits[0] or fit.get(id(h), level) >= level})
    return cut


def by_join(base, vecs, level=3.0, k=0):
    """(a) A gathering question about its asker: `base`'s block joined by the pool's memories whose profile
    similarity stands `level` robust z or more."""

    def cut(hits, q):
        kept = base(hits, q)
        if not _gathering(hits, q):
            return kept
        return rg._first_kept(hits, {id(h) for h in kept} | {
            id(h) for h, z in blended(hits, q, vecs, None, k) if z >= level})
    return cut


def by_blend(base, vecs, lam=0.01, k=0):
    """(b) Every question about its asker: its corrected score plus lam times the profile similarity, then `base`
    with its gaps as they are."""

    def cut(hits, q):
        s = sims(hits, q, vecs, k) if rg._asker_block(hits, q) else {}
        return base([replace(h, signals={**h.signals, "hub": h.signals["hub"] + lam * s[id(h)]}) if id(h) in s else h
                     for h in hits], q)
    return cut


def rows(base, vecs) -> dict:
    """bench/recall_designs.py's rows for these designs, each beside `base` (the default)."""
    return {"profile (a): gathering cut at 3 robust z of corrected + 2 x profile (top 20)": by_profile(base, vecs),
            "profile (a), gathering.py's 100 questions in the background too (top 40)": by_profile(
                base, vecs, k=40, more=True),
            "profile (a), overlap of the top-20 background questions": by_profile(base, vecs, overlap=True),
            "profile (a'): expanded, 5 nearest background questions a language (max), weight 1": by_profile(
                base, vecs, 1.0, k=-5),
            "profile (a): off topic by profile correlation to the 9 others < -0.05, not CSLS": by_fit(
                base, vecs, -0.05, also=False),
            "profile (a): gathering joined by profile correlation >= 3 robust z": by_join(base, vecs),
            "profile (b): corrected score + 0.01 x profile correlation, every asker question": by_blend(base, vecs),
            "profile (b): corrected score + 0.02 x profile (top 20)": by_blend(base, vecs, 0.02, 20)}


def main() -> None:
    import argparse
    import json
    import shutil
    import tempfile

    import recall_designs as rd
    from indexer import config
    from indexer.memory import Memory
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=rd.default_eval_dir())
    root = ap.parse_args().eval_dir / "recall-focus-dev"
    queries = [json.loads(x) for x in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "corpus", Path(tmp) / "focus")
        with Memory(cfg=config.load(home=Path(tmp) / "focus", env={}, recall_cut="relevance", ranking_fill_s=-1)) as mem:
            mem.index()
            pools = rd.capture(mem, [q["query"] for q in queries])
    for q, (pool, _) in zip(queries, pools):
        if pool is None or not q["relevant"]:
            continue
        want, ranks = sorted(r["start_line"] for r in q["relevant"]), []
        for name, ss in (("corrected", [(h, h.signals["hub"]) for h in hubness.scored(pool[0])]),
                         ("corr", blended(*pool, rd.VECTORS, None)), ("top 20", blended(*pool, rd.VECTORS, None, 20))):
            order = [h.start_line for h, _ in ss]
            ranks.append(f"{name} {[order.index(w) if w in order else None for w in want]}")
        print(f"{q['qid']} want {want}, ranks by " + ", ".join(ranks))


if __name__ == "__main__":
    main()
