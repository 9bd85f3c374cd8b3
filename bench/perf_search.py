"""Search latency for bench/perf.py: in process and through a daemon, and the kept vector copy's recall."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from daemon_bench import wait_ready  # noqa: E402
from indexer import config as config_mod  # noqa: E402
from indexer.index import sql  # noqa: E402
from indexer.kept.owner import KeptCopies  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.remote import Client, socket_path  # noqa: E402

MODES = ("fts", "vector", "hybrid")


def percentiles(times: list[float]) -> dict:
    times = sorted(times)
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
            "n": len(times)}


def time_modes(search, queries: list[str], modes, repeat: int) -> dict:
    """p50/p95 per mode of search(query, mode), after three warm-up calls per mode (caches, model)."""
    out = {}
    for mode in modes:
        for q in queries[:3]:
            search(q, mode)
        times = []
        for _ in range(repeat):
            for q in queries:
                t0 = time.perf_counter()
                search(q, mode)
                times.append((time.perf_counter() - t0) * 1000)
        out[mode] = percentiles(times)
    return out


def search_latency(home: Path, queries: list[str], modes, repeat: int) -> dict:
    """In-process p50/p95 per mode: one Memory, model loaded once, as the daemon would hold it."""
    with Memory(home=home) as mem:
        return time_modes(lambda q, mode: mem.search(q, mode=mode, limit=10), queries, modes, repeat)


def daemon_latency(home: Path, queries: list[str], modes, repeat: int, env: dict) -> dict:
    """p50/p95 per mode through `mdmem serve`'s socket: one client, one call per query, as an agent would."""
    sock = socket_path(config_mod.load(home=home, env=env), env)
    log = home.parent / f"serve-{home.name}.log"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve"], env=env,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=str(REPO))
    out = {}
    try:
        wait_ready(proc, sock, timeout=1800)
        client = Client(sock, timeout=120)
        client.call("search", {"query": queries[0], "mode": "hybrid", "limit": 10})
        out["start_to_first_answer_s"] = round(time.perf_counter() - t0, 2)
        # the figures are a serving daemon's: wait until its kept vectors and words answer (sqlite-vec scans and
        # FTS5 scores every row before)
        while "loading" in (client.call("status")["global"].get("kept_vectors"),
                            client.call("status")["global"].get("kept_words")):
            time.sleep(0.2)
        out["start_to_kept_vectors_s"] = round(time.perf_counter() - t0, 2)
        out["chunks"] = client.call("status")["global"]["chunks"]
        # let the start-up reconcile settle (12 s for 200k unchanged files): the figures are a serving daemon's
        while client.call("status")["global"].get("busy"):
            time.sleep(0.5)
        time.sleep(2)
        out["idle_rss_mb"] = round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)
        # the start-up reconcile must find every note unchanged, or the figures time a different index
        out["reconcile"] = next((json.loads(ln) for ln in log.read_text().splitlines()
                                 if ln.startswith("{") and '"reconciled"' in ln), {})
        out.update(time_modes(lambda q, mode: client.call("search", {"query": q, "mode": mode, "limit": 10}),
                              queries, modes, repeat))
        out["rss_after_queries_mb"] = round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    return out


def _kept(st):
    """The store's kept matrix or IVF lists, read or built now; (it, seconds until it answers)."""
    t0 = time.perf_counter()
    matrix = st.kept.vectors(st)
    st.kept.warm([st])
    st.kept.ready(st)  # both are read in a background thread
    return matrix, time.perf_counter() - t0


def matrix_recall(home: Path, queries: list[str], k: int = 10) -> dict:
    """The daemon's KNN (in-memory matrix, or IVF lists on a big store) against sqlite-vec's exact cosine
    scan: recall@k, time to load (for lists: to build when no saved file is there, then to read it), size."""
    with Memory(home=home, kept=KeptCopies(keep=True)) as mem:  # kept as the daemon keeps them
        st = mem.stores("global")[0]
        try:
            matrix, first_s = _kept(st)
            load_s = first_s
            if hasattr(matrix, "wait"):  # read the saved lists back, as a daemon starting again does
                matrix.wait()  # their save, which follows their build
                st.kept.drop()
                st.kept = KeptCopies(keep=True)  # a daemon started again
                matrix, load_s = _kept(st)
            recalls, tied, fast, exact = [], [], [], []
            for q in queries:
                v = mem.embedder.embed_query(q)
                t0 = time.perf_counter()
                got = {cid for cid, _s in matrix.search(st.con, v, k)}
                t1 = time.perf_counter()
                found = sql.vector_search(st.con, v, k)
                t2 = time.perf_counter()
                want = {r["id"] for r in found}
                fast.append((t1 - t0) * 1000)
                exact.append((t2 - t1) * 1000)
                recalls.append(len(got & want) / max(1, len(want)))
                # copies of one text tie exactly: a copy the scan left out is as near as the one it kept
                kth = min((r["similarity"] for r in found), default=1.0)
                u = v / np.linalg.norm(v)
                other = sql.vectors_for_ids(st.con, list(got - want))
                tied.append((len(got & want) + sum(float(x @ u / np.linalg.norm(x)) >= kth - 1e-6
                                                   for x in other.values())) / max(1, len(want)))
        finally:
            st.kept.drop()
            mem.kept.drop()
    return {f"recall_at_{k}": round(statistics.mean(recalls), 4), "min_recall": min(recalls),
            f"recall_at_{k}_ties": round(statistics.mean(tied), 4), "min_recall_ties": min(tied), "rows": matrix.rows,
            "matrix_mb": round(matrix.nbytes() / 2**20, 1), "load_s": round(load_s, 2), "first_load_s": round(first_s, 2),
            "kind": type(matrix).__name__,
            "matrix_ms": percentiles(fast), "sqlite_vec_ms": percentiles(exact)}


def both_latencies(home: Path, queries: list[str], args, env: dict) -> dict:
    """In-process and daemon figures for one store; the daemon pass can be skipped with --no-daemon."""
    res = {"load_before": os.getloadavg()}
    if not args.no_in_process:
        res["in_process"] = search_latency(home, queries, MODES, args.repeat)
    res["matrix"] = matrix_recall(home, queries)
    if not args.no_daemon:
        res["daemon"] = daemon_latency(home, queries, MODES, args.repeat, env)
    return res
