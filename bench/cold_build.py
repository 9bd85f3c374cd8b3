"""A cold build as a user runs it: `mdmem index` over a big folder of notes, killed part way and run again.

    python bench/cold_build.py --work W --files 160000 --kill-at 0.5     # about 1M chunks

Writes the perf corpus (varied copies of the dev corpora's notes: every chunk new text) once into
W/cold<files>/home, then runs `mdmem index` as a subprocess with the ranking model's fill left out
(MDMEM_RERANK=false: `index` would otherwise go on filling it, ~20 texts/s, after the store answers).
The process's RSS is sampled every 0.25 s and the notes written are counted every 10 s (a read-only
connection), so the figures show how the build goes as it grows. With --kill-at F the first run is
killed (SIGKILL) once that share of the notes is written, and `index` is run again to the end.
Then the raw model on a sample of the same texts, all cores, and the ranking model's fill rate.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import cli_env, default_eval_dir  # noqa: E402
from perf import db_size, embedded_of, make_corpus, raw_embed, source_files  # noqa: E402

from indexer import config as config_mod  # noqa: E402
from indexer.index import db  # noqa: E402


def notes_written(home: Path) -> int:
    try:
        con = db.connect(home / "index.db", readonly=True)
    except Exception:
        return 0
    try:
        return con.execute("SELECT count(*) FROM documents").fetchall()[0][0]
    except Exception:
        return 0
    finally:
        con.close()


def run_index(home: Path, env: dict, files: int, kill_at: float | None, log: Path) -> dict:
    """One `mdmem index`: seconds, peak RSS, the timeline of notes written, its summary (None when killed)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "index"], env=env,
                         stdout=subprocess.PIPE, stderr=open(log, "a"), text=True)
    peak, stop = [0], threading.Event()

    def sample():
        proc = psutil.Process(p.pid)
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], proc.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.25)

    threading.Thread(target=sample, daemon=True).start()
    timeline, killed = [], False
    while p.poll() is None:
        time.sleep(10)
        n = notes_written(home)
        timeline.append((round(time.perf_counter() - t0), n, round(peak[0] / 2**20)))
        print(json.dumps({"t": timeline[-1][0], "notes": n, "peak_rss_mb": timeline[-1][2]}), flush=True)
        if kill_at is not None and n >= kill_at * files and p.poll() is None:
            p.send_signal(signal.SIGKILL)
            killed = True
            break
    out = p.communicate()[0]
    stop.set()
    return {"s": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(peak[0] / 2**20, 1), "killed": killed,
            "exit": p.returncode, "summary": None if killed else out.strip().splitlines()[-1:],
            "timeline": timeline}


def e5_rate(texts: list[str]) -> float:
    from indexer import ranking_model
    ranking_model.passages(texts[:8])
    t0 = time.perf_counter()
    for i in range(0, len(texts), 32):
        ranking_model.passages(texts[i:i + 32])
    return round(len(texts) / (time.perf_counter() - t0), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--files", type=int, default=160_000)
    ap.add_argument("--kill-at", type=float, default=None, help="kill the first run at this share of the notes")
    ap.add_argument("--raw", type=int, default=10_000, help="texts of the raw model's sample")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = ap.parse_args()
    env = cli_env({"MDMEM_RERANK": "false"})
    home = args.work / f"cold{args.files}" / "home"
    out: dict = {"files": args.files, "load_before": os.getloadavg()}
    if not (home / "gen").is_dir():
        home.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        out["corpus_bytes"] = make_corpus(home, args.files, source_files(args.eval_dir))
        out["corpus_s"] = round(time.perf_counter() - t0, 1)
    for stale in home.glob("index.db*"):
        stale.unlink()
    log = home.parent / "index.log"
    runs = [run_index(home, env, args.files, args.kill_at, log)]
    if runs[0]["killed"]:
        runs.append(run_index(home, env, args.files, None, log))
    out["runs"] = runs
    con = db.connect(home / "index.db", readonly=True)
    texts = [r[0] for r in con.execute("SELECT content FROM chunks")]
    out["chunks"], out["notes"] = len(texts), con.execute("SELECT count(*) FROM documents").fetchall()[0][0]
    con.close()
    out["db_bytes"] = db_size(home)
    # each distinct text was embedded once, by one of the runs (a run started again reuses what the first wrote)
    out["texts"] = len(set(texts))
    out["embedded_last_run"] = embedded_of(runs[-1]) if runs[-1]["summary"] else None
    seconds = sum(r["s"] for r in runs)
    out["texts_per_s"] = round(out["texts"] / seconds, 1)
    out["chunks_per_s"] = round(out["chunks"] / seconds, 1)
    sample = random.Random(5).sample(texts, min(args.raw, len(texts)))
    cfg = config_mod.load(home=home, env=env)
    cores = os.cpu_count() or 1
    raw = raw_embed(cfg, sample, cores)
    out["raw_texts_per_s"] = round(len(sample) / raw, 1)
    out["build_to_raw"] = round(out["texts_per_s"] / out["raw_texts_per_s"], 2)
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    out["e5_passages_per_s"] = e5_rate(sample[:500])
    out["load_after"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
