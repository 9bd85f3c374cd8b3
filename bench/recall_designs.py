"""Recall cuts compared offline: each question's pool is collected once through `recall`, each design cuts it.

    python bench/recall_designs.py [--sets focus,zh,facts,apart] [--eval-dir ../shared/eval] [--embedder NAME] [-v]

focus: recall-focus-dev (focus pass per category, precision, narrow blocks opening with an answer); zh:
bench/zh_memories.py's 40 questions (answer inside the block, first); facts: locomo-facts-dev, one store per
conversation (share of the relevant lines inside the block, per conversation); apart: bench/recall_gather.apart_set.
The pool is what `on_topic` sees under `recall_cut = "relevance"` with every question judged, so every design reads
the same hits; "gap" over the first 8 of that pool approximates the cosine-gap cut (its own search stops at 8 hits);
"live" is the block `recall` gives as configured.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from indexer import config, ranking_model  # noqa: E402
from indexer.memories.add import normalise  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.notes.textseg import mostly_han  # noqa: E402
from indexer.retrieval import recall as recall_mod  # noqa: E402
from indexer.retrieval import hubness, opinion, relations, relevance  # noqa: E402
from eval import default_eval_dir  # noqa: E402
from zh_memories import load_cases  # noqa: E402
import recall_early as early  # noqa: E402
import recall_gather as gather  # noqa: E402
import recall_narrow  # noqa: E402
import recall_opinion  # noqa: E402
import recall_instructions  # noqa: E402
import recall_profile  # noqa: E402

LIMIT = 8
ASKED_ON = "2026-11-25"


def capture(mem: Memory, questions: list[str], now: str | None = None) -> list:
    """Per question (pool, live): pool is the (hits, query) on_topic cut with every question judged (None when
    recall did not reach it), live the block recall gives with the settings as they are."""
    seen: dict = {}

    def spy(hits, query, judged=False, asked_for=lambda h: False):
        seen["pool"] = (list(hits), query) if judged else None
        return recall_mod.on_topic(hits, query, judged, asked_for)

    def search(text: str, scope: str, limit: int):  # as Memory.recall searches: nothing counted until handed out
        return mem.search(text, scope=scope, limit=limit, bump=False, now=now)
    out = []
    for q in questions:
        live = [(m["uri"], m["start_line"], m["text"]) for m in mem.recall(q, now=now)["memories"]]
        seen.clear()
        recall_mod.recall(q, cfg=mem.cfg, search=search, record_access=mem.writer.record_access, warn=print,
                          judge=lambda hits, query: True, cut=spy,
                          vectors=lambda hits: hubness.vectors(mem.stores("all"), hits), second=lambda hits, q:
                          opinion.attach(hits, q, mem.stores("all"), mem.embedder, mem.cfg.home))
        out.append((seen.get("pool"), live))
        if seen.get("pool"):
            VECTORS.update(hubness.vectors(mem.stores("all"), seen["pool"][0]))
    return out


def _members(hits):
    return sorted((h for h in hits if h.signals.get("member")), key=lambda h: not h.signals.get("own_member"))


def by_relevance(gap=0.02, gather=0.05, asker=False, widen=0.0):
    """The relevance cut: relevant hits within `gap` of the best margin; asker: a question about its asker that
    finds nothing relevant keeps the cosine-gap cut; widen: the gap grows as the best margin falls under 0.05."""
    def cut(hits, q):
        scored = [h for h in hits if not h.signals.get("superseded") and h.relevance is not None]
        if any(h.signals.get("member") for h in scored):
            return _members(hits)
        rel = [h for h in scored if h.relevance >= 0.5]
        if not rel:
            return recall_mod.near_best(hits[:LIMIT], q) if asker and relevance.about_asker(q) else []
        best = max(h.signals["margin"] for h in rel)
        g = (gather if relevance.gathers(q) else gap) + widen * max(0.0, 0.05 - best)
        kept = [h for h in hits if h.relevance is not None and h.relevance >= 0.5 and h.signals["margin"] >= best - g]
        return kept if hits[0] in kept else [hits[0], *kept]
    return cut


def by_asker(gap=0.025, only_relevant=False):
    """The default: the relevance cut for a question about its asker (the gap cut when nothing is relevant); for
    any other question an empty block when nothing is relevant, else the gap cut (only_relevant: less the hits
    under 0.5, the first one kept)."""
    tight = by_relevance(gap=gap, asker=True)

    def cut(hits, q):
        if relevance.about_asker(q):
            return tight(hits, q)
        scored = [h for h in hits if not h.signals.get("superseded") and h.relevance is not None]
        if not any(h.relevance >= 0.5 for h in scored):
            return []
        near = recall_mod.near_best(hits[:LIMIT], q)
        kept = [h for h in near if h.relevance is not None and h.relevance >= 0.5] if only_relevant else near
        return kept if hits[0] in kept else [hits[0], *kept]
    return cut


def before_roles(design):
    """A design as it cut before relations: the pool less the memories a relation's search added, unmarked."""
    def cut(hits, q):
        return design([replace(h, signals={k: v for k, v in h.signals.items() if k != "role"}) for h in hits
                       if not h.signals.get("widened")], q)
    return cut


def with_roles(design):
    """A question naming someone of the asker's ("my son", 我老婆): the memories naming them by relation word or
    by a name the store gives them (recall.about_roles), else `design`."""
    def cut(hits, q):
        current = [h for h in hits if not h.signals.get("superseded")]
        if any(h.signals.get("role") for h in current):
            return recall_mod.about_roles(hits, current, relevance.gathers(q) or relations.asks_instructions(q))
        return design(hits, q)
    return cut


def _narrow_asker(hits, q) -> bool:
    return relevance.about_asker(q) and not relevance.gathers(q) and not any(
        h.signals.get("role") or h.signals.get("member") for h in hits)


def by_shared_words(other_gap=0.0):
    """A narrow question about its asker whose first hit shares words with it (full text found it): of the default's
    block, the hits sharing words too, and those in the other script within other_gap of the best margin."""
    base = with_roles(by_asker())

    def cut(hits, q):
        kept = base(hits, q)
        if not _narrow_asker(hits, q) or not kept or kept[0].signals.get("bm25") is None:
            return kept
        best, han = max(h.signals.get("margin", -1.0) for h in kept), mostly_han(q)
        return [h for h in kept if h.signals.get("bm25") is not None or (
            mostly_han(h.content) != han and h.signals.get("margin", -1.0) >= best - other_gap)]
    return cut


def by_margin_order(gap=0.01, k=2):
    """A narrow question about its asker: the k best hits by margin, those within gap of the best (the ranking's
    first is not kept for being first)."""
    base = with_roles(by_asker())

    def cut(hits, q):
        cand = [h for h in hits if not h.signals.get("widened") and not h.signals.get("superseded")
                and h.signals.get("margin") is not None]
        if not _narrow_asker(hits, q) or not any(h.relevance >= 0.5 for h in cand):
            return base(hits, q)
        cand.sort(key=lambda h: -h.signals["margin"])
        return [h for h in cand if h.signals["margin"] >= cand[0].signals["margin"] - gap][:k]
    return cut


# generic first-person memories of both languages (no store's): what any personal memory on a question's topic reaches
PERSONAL_BACKGROUND = (
    "I drink two cups of coffee every morning.", "My brother works as an accountant in a bank.",
    "I go jogging in the park on weekends.", "We are planning a trip to Italy next summer.",
    "I have been learning to play the guitar.", "My laptop is a five-year-old Dell.", "I am allergic to cats.",
    "I work as a teacher at a primary school.", "Our apartment is close to the subway.",
    "I like watching documentaries about history.", "My daughter started kindergarten this year.",
    "I usually cook dinner at home.", "我每天早上喝一杯咖啡。", "我哥哥在银行当会计。", "周末我会去公园跑步。",
    "我们打算明年夏天去意大利旅行。", "我最近在学弹吉他。", "我的笔记本电脑用了五年了。", "我对猫毛过敏。", "我在一所小学当老师。",
    "我们家离地铁站很近。", "我喜欢看历史纪录片。", "我女儿今年上幼儿园了。", "我平时在家做晚饭。",
)


def by_personal_background(over=0.0, gate=False):
    """A question not about its asker nor its people (gate: nor naming, capitalised, a word its hits hold): empty
    unless its best memory (first 8) stands `over` of e5 cosine above what it scores on PERSONAL_BACKGROUND in the
    memory's language (an answer, not merely a memory on the question's topic)."""
    base = with_roles(by_asker())

    def cut(hits, q):
        kept, top = base(hits, q), hits[:LIMIT]
        named = gate and any(w in h.content for w in re.findall(r"(?<!^)\b[A-Z][a-z]+", q.strip()) for h in top)
        if relevance.about_asker(q) or relations.asked_of_asker(q, False) or not kept or named:
            return kept
        cos = ranking_model.background(PERSONAL_BACKGROUND) @ ranking_model.query(q)
        han = np.array([mostly_han(t) for t in PERSONAL_BACKGROUND])
        level = {True: float(cos[han].max()), False: float(cos[~han].max())}
        best = max(h.signals["e5_cosine"] - level[mostly_han(h.content)] for h in top
                   if h.signals.get("e5_cosine") is not None)
        return kept if best >= over else []
    return cut


def by_hubness(narrow=hubness.NARROW_GAP, gather=hubness.GATHER_GAP, answers=hubness.ANSWERS, topics=False,
               off_topic=hubness.OFF_TOPIC, spread=hubness.NARROW_SPREAD, first=hubness.FIRST_SPREAD):
    """A question about its asker (no relative or role named): the memories within `narrow` (`gather`) of the best
    hubness-corrected score (retrieval/hubness); a question about anything else is emptied unless its best memory
    stands `answers` above its background level (None: not), else the default before. topics: a gathering
    question also takes the pool's memories as close to the kept ones' centroid (e5) as the farthest kept one.
    off_topic: hubness.OFF_TOPIC (-inf: no memory of a gathering block leaves it for lying off the topic).
    spread: a narrow gap of that many stds of the pool's corrected scores (None: `narrow`); first: how many stds under
    the best corrected score a narrow block still keeps the ranking's first in the question's script (inf: always)."""
    base = with_roles(by_asker())

    def cut(hits, q):
        if relevance.about_asker(q) and hubness.scored(hits) and not any(
                h.signals.get("member") or h.signals.get("role") for h in hits):
            gathering = relevance.gathers(q) or relations.asks_instructions(q)
            kept = hubness.answering(hits, gathering, q)
            return _topic(kept, hits) if topics and gathering else kept
        kept = base(hits, q)
        if answers is None or relevance.about_asker(q) or relations.asked_of_asker(q, False) or not hubness.scored(
                hits):
            return kept
        return kept if hubness.scored(hits)[0].signals["hub"] >= answers else []
    return recall_narrow.settings(cut, NARROW_GAP=narrow, GATHER_GAP=gather, OFF_TOPIC=off_topic,
                                  NARROW_SPREAD=spread or 0.0, FIRST_SPREAD=first)


VECTORS: dict = {}  # (store, id) -> e5 vector of the captured pools' hits (topic gathering reads them)


def _topic(kept, hits):
    have = [h for h in kept if (h.store, h.id) in VECTORS]
    if not have:
        return kept
    v = np.stack([VECTORS[(h.store, h.id)] for h in have])
    c = v.mean(axis=0) / np.linalg.norm(v.mean(axis=0))
    spread = float((v @ c).min())
    more = [h for h in hubness.scored(hits) if h not in kept and (h.store, h.id) in VECTORS
            and float(VECTORS[(h.store, h.id)] @ c) >= spread]
    return kept + more


OLD = {"spread": None, "first": np.inf}  # the narrow cut before: a fixed gap, the ranking's first always kept
BEFORE = by_hubness(off_topic=-np.inf, **OLD)
OFF_TOPIC = by_hubness(**OLD)
READ = gather.by_reading(by_hubness(), 0.035)  # the narrow cut now, gathering read by e5 too
DESIGNS = {
    "live (recall as configured)": None,
} | {name: recall_narrow.settings(cut, **recall_narrow.BEFORE) for name, cut in {  # the rows measured before
    "gap (cosine gap 0.05, first 8)": before_roles(lambda hits, q: recall_mod.near_best(hits[:LIMIT], q)),
    "relevance, gap 0.02 (opt-in before)": before_roles(by_relevance()),
    "relevance + asker guard, gap 0.02": before_roles(by_relevance(asker=True)),
    "relevance + asker guard, gap 0.025": before_roles(by_relevance(gap=0.025, asker=True)),
    "relevance + asker guard, widened gap": before_roles(by_relevance(asker=True, widen=0.5)),
    "asker-scoped, gap 0.02": before_roles(by_asker(0.02)),
    "asker-scoped, gap 0.025 (the default before)": before_roles(by_asker()),
    "asker-scoped, others' gap cut less the hits under 0.5": before_roles(by_asker(only_relevant=True)),
    "pool level z >= 2": before_roles(early.by_pool_level()),
    "largest e5 drop in the first 8": before_roles(early.by_largest_drop()),
    "relation words and names, else asker-scoped gap 0.025 (default before)": with_roles(by_asker()),
    "relations + shared words (narrow)": by_shared_words(),
    "relations + margin order, 2 best within 0.01 (narrow)": by_margin_order(),
    "relations + margin order, 3 best within 0.015 (narrow)": by_margin_order(0.015, 3),
    "relations + personal background 0.06 (others' questions)": by_personal_background(0.06),
    "relations + personal background 0.07, unnamed questions": by_personal_background(0.07, gate=True),
    "hubness-corrected, narrow 0.01 / gather 0.02, no answer test": by_hubness(answers=None, **OLD),
    "hubness-corrected, narrow 0.015 / gather 0.025 + answer test": by_hubness(0.015, 0.025, **OLD),
    "hubness-corrected + topic gathering (centroid)": by_hubness(topics=True, **OLD),
    "hubness-corrected + answer test 0.045": by_hubness(answers=0.045, **OLD),
    "hubness-corrected, narrow 0.01 / gather 0.02 + answer test 0.02 (default before)": BEFORE,
    "before + gathering: topic as a passage, CSLS, gap 0.01": gather.by_topic(BEFORE, VECTORS),
    "before + gathering: topic CSLS + corrected score, gap 0.015": gather.by_topic(BEFORE, VECTORS, 0.015, True),
    "before + gathering: largest drop of the corrected score after 3": gather.by_largest_drop(BEFORE, lo=3),
    "before + gathering: largest drop of topic + corrected after 3": gather.by_largest_drop(BEFORE, VECTORS, 3, True),
    "before + gathering: memory-to-memory CSLS neighbours (pool 25)": gather.by_neighbours(BEFORE, VECTORS),
    "before + gathering: off topic (mean CSLS to the best 10) < -0.02 leaves": by_hubness(off_topic=-0.02, **OLD),
    "before + gathering: off topic (mean CSLS to the best 10) < -0.015 leaves (default before)": by_hubness(**OLD),
    **gather.designs(OFF_TOPIC),
}.items()} | recall_narrow.designs(by_hubness, VECTORS) | {
    "narrow spread + gathering read by e5 from 0.02": gather.by_reading(by_hubness(), 0.02),
    "narrow spread + gathering read by e5 from 0.035 (no second opinion)": READ,
    **recall_profile.rows(gather.by_reading(OFF_TOPIC, 0.02), VECTORS),
}
DESIGNS = {k: v if v is None else recall_opinion.without(v) for k, v in DESIGNS.items()} | recall_opinion.rows(READ)
DESIGNS = {k: v if v is None else recall_narrow.settings(v, MARGIN_GAP=0) for k, v in DESIGNS.items()}  # before it
DESIGNS |= {k: recall_opinion.without(v) for k, v in recall_instructions.rows(READ).items()}
SETTINGS = {"env": {}, "recall_cut": "relevance", "ranking_fill_s": -1}  # --embedder adds the embedder


def block(design, captured) -> list:
    """(uri, start_line, text) of the block a design cuts from a captured pool (the live block for None)."""
    pool, live = captured
    if design is None or pool is None:  # a question recall does not judge (it names a time) keeps the gap cut
        return live
    return [(h.uri, h.start_line, recall_mod.one_line_text(h.content)) for h in design(*pool)[:LIMIT]]


def focus_set(eval_dir: Path, tmp: Path):
    root = eval_dir / "recall-focus-dev"
    queries = [json.loads(x) for x in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    shutil.copytree(root / "corpus", tmp / "focus")
    with Memory(cfg=config.load(home=tmp / "focus", **SETTINGS)) as mem:
        mem.index()
        pools = capture(mem, [q["query"] for q in queries])

    def score(design, verbose=False):
        cats, prec, first = collections.defaultdict(list), [], []
        for q, pool in zip(queries, pools):
            lines = [line for _, line, _ in block(design, pool)]
            want = {r["start_line"] for r in q["relevant"]}
            ok = (want <= set(lines) and len(lines) <= q["max_lines"]) if want else not lines
            cats[q["category"]].append(ok)
            if q["category"] == "narrow":
                first.append(bool(lines) and lines[0] in want)
            if lines:
                prec.append(sum(x in want for x in lines) / len(lines))
            if verbose and not ok:
                print(f"    {q['qid']} {q['query']} kept {lines} want {sorted(want)}")
        return gather.summary(cats, prec, first)
    return score


def zh_set(eval_dir: Path, tmp: Path):
    cases = load_cases()
    with Memory(cfg=config.load(home=tmp / "zh", **SETTINGS)) as mem:
        for text in dict.fromkeys(c["memory"] for c in cases):
            mem.add(text, type="fact")
        pools = capture(mem, [c["query"] for c in cases])

    def score(design, verbose=False):
        inside = first = 0
        for c, pool in zip(cases, pools):
            texts = [normalise(text) for _, _, text in block(design, pool)]
            inside += normalise(c["memory"]) in texts
            first += texts[:1] == [normalise(c["memory"])]
            if verbose and normalise(c["memory"]) not in texts:
                print(f"    lost {c['query']} -> {c['memory']}")
        return {"inside": round(inside / len(cases), 3), "first": round(first / len(cases), 3)}
    return score


def facts_set(eval_dir: Path, tmp: Path):
    root = eval_dir / "locomo-facts-dev"
    queries = [json.loads(x) for x in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    by_conv = collections.defaultdict(list)
    for q in queries:
        by_conv[q["scope"]].append(q)
    rows = []
    for scope, group in sorted(by_conv.items()):
        home = tmp / "facts" / scope.strip("/").replace("/", "_")
        shutil.copytree(root / "corpus" / scope, home / scope)
        with Memory(cfg=config.load(home=home, **SETTINGS)) as mem:
            mem.index()
            pools = capture(mem, [q["query"] for q in group], now=ASKED_ON)
        rows += list(zip(group, pools))

    def score(design, verbose=False):
        per = collections.defaultdict(list)
        for q, pool in rows:
            got = {(uri, line) for uri, line, _ in block(design, pool)}
            want = {(r["uri"], r["start_line"]) for r in q["relevant"]}
            per[q["scope"].split("/")[1]].append(len(want & got) / len(want))
        every = [x for v in per.values() for x in v]
        return {"inside": round(sum(every) / len(every), 3), **{k: round(sum(v) / len(v), 3) for k, v in per.items()}}
    return score


SETS = {"focus": focus_set, "zh": zh_set, "facts": facts_set, "apart": lambda d, t: gather.apart_set(t, capture, block)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sets", default="focus,zh,facts")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("-v", "--verbose", action="store_true", help="list each design's failures")
    ap.add_argument("--embedder", help="another embedder: sentence-transformers (the bundled MiniLM)")
    args = ap.parse_args()
    SETTINGS.update({"embedder": args.embedder} if args.embedder else {})
    with tempfile.TemporaryDirectory() as tmp:
        scorers = {name: SETS[name](args.eval_dir, Path(tmp)) for name in args.sets.split(",")}
    for design, cut in DESIGNS.items():
        print(design)
        for name, score in scorers.items():
            print(f"  {name}: {json.dumps(score(cut, args.verbose))}", flush=True)


if __name__ == "__main__":
    main()
