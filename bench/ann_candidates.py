"""First stages for vector search at 1M rows, measured side by side on one synthetic set against exact cosine."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def synthetic(n: int, dim: int, topics: int, seed: int = 1) -> np.ndarray:
    """Unit rows around `topics` centres with a decaying spectrum (embeddings are not isotropic)."""
    rng = np.random.default_rng(seed)
    scale = (1.0 / np.sqrt(np.arange(1, dim + 1))).astype(np.float32)
    centres = rng.standard_normal((topics, dim), dtype=np.float32) * scale
    out = np.empty((n, dim), dtype=np.float32)
    for i in range(0, n, 100_000):
        m = min(100_000, n - i)
        pick = rng.integers(0, topics, m)
        out[i:i + m] = centres[pick] + 0.6 * rng.standard_normal((m, dim), dtype=np.float32) * scale
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


TRAIN_PER_LIST, ITERATIONS, BLOCK = 40, 8, 32_768


def train(x: np.ndarray, nlist: int, seed: int = 0) -> np.ndarray:
    """nlist unit centres for the unit rows of x (a sample of TRAIN_PER_LIST rows a centre is enough)."""
    rng = np.random.default_rng(seed)
    if len(x) > nlist * TRAIN_PER_LIST:
        x = x[np.sort(rng.choice(len(x), nlist * TRAIN_PER_LIST, replace=False))]
    x = np.asarray(x, dtype=np.float32)
    nlist = min(nlist, len(x))
    cent = x[rng.choice(len(x), nlist, replace=False)].copy()
    for _ in range(ITERATIONS):
        near = nearest_centre(cent, x)
        sums = np.zeros_like(cent)
        np.add.at(sums, near, x)
        counts = np.bincount(near, minlength=nlist)
        empty = np.flatnonzero(counts == 0)
        sums[empty] = x[rng.choice(len(x), len(empty), replace=False)]  # an empty list takes a random row
        cent = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return cent.astype(np.float32)


def nearest_centre(cent: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's nearest centre (largest dot product), computed in blocks to bound memory."""
    out = np.empty(len(x), dtype=np.int32)
    for i in range(0, len(x), BLOCK):
        out[i:i + BLOCK] = np.argmax(np.asarray(x[i:i + BLOCK], dtype=np.float32) @ cent.T, axis=1)
    return out


def exact_top(x: np.ndarray, qs: np.ndarray, k: int) -> np.ndarray:
    sims = x @ qs.T
    return np.argpartition(-sims, k, axis=0)[:k].T


def recall(got: list, want: np.ndarray) -> tuple[float, float]:
    r = [len(set(g) & set(w)) / len(w) for g, w in zip(got, want)]
    return statistics.mean(r), min(r)


def report(name: str, times: list[float], got, want, extra: str = "") -> None:
    mean, low = recall(got, want)
    times = sorted(times)
    print(f"{name} | p50 {statistics.median(times):.1f} ms | p95 {times[int(0.95 * (len(times) - 1))]:.1f} ms"
          f" | recall@10 {mean:.4f} (min {low:.2f}) {extra} | load {os.getloadavg()[0]:.1f}", flush=True)


def run_matrix(x, qs, want, k):
    from indexer.kept.vector_matrix import VectorMatrix
    m = VectorMatrix()
    m.dim = x.shape[1]
    m._clear(x.shape[1])
    m._mean = x[:4096].mean(axis=0)
    t0 = time.perf_counter()
    for i in range(0, len(x), 50_000):
        m._append([(i + j + 1, str(i + j), x[i + j]) for j in range(min(50_000, len(x) - i))])
    build = time.perf_counter() - t0
    times, got = [], []
    for q in qs:
        t0 = time.perf_counter()
        rows = m._shortlist(q)
        sims = m._cosines(rows, q)
        top = rows[np.argsort(-sims)[:k]]
        times.append((time.perf_counter() - t0) * 1000)
        got.append(top.tolist())
    report("matrix today (1-bit over all, int8 5%)", times, got, want, f"| build {build:.0f} s")


def run_ivf(x, qs, want, k, nlist, probes):
    t0 = time.perf_counter()
    cent = train(x, nlist)
    assign = nearest_centre(cent, x)
    build = time.perf_counter() - t0
    order = np.argsort(assign, kind="stable")
    starts = np.searchsorted(assign[order], np.arange(nlist + 1))
    from indexer.kept.vector_matrix import int8_codes
    codes, scale = int8_codes(x[order])
    for nprobe in probes:
        times, got = [], []
        for q in qs:
            t0 = time.perf_counter()
            near = np.argpartition(-(cent @ q), nprobe)[:nprobe]
            rows = np.concatenate([np.arange(starts[c], starts[c + 1]) for c in near])
            sims = (codes[rows].astype(np.float32) @ q) * scale[rows]
            top = order[rows[np.argpartition(-sims, k)[:k]]]
            times.append((time.perf_counter() - t0) * 1000)
            got.append(top.tolist())
        report(f"numpy IVF{nlist} int8, nprobe {nprobe}", times, got, want, f"| train+assign {build:.0f} s")


def run_faiss(x, qs, want, k, nlist, probes, kind):
    import faiss
    faiss.omp_set_num_threads(1)
    t0 = time.perf_counter()
    quant = faiss.IndexFlatIP(x.shape[1])
    if kind == "sq8":
        idx = faiss.IndexIVFScalarQuantizer(quant, x.shape[1], nlist, faiss.ScalarQuantizer.QT_8bit,
                                            faiss.METRIC_INNER_PRODUCT)
    else:
        idx = faiss.IndexIVFFlat(quant, x.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    faiss.omp_set_num_threads(2)
    idx.train(x[np.random.default_rng(0).choice(len(x), min(len(x), nlist * 40), replace=False)])
    idx.add(x)
    faiss.omp_set_num_threads(1)
    build = time.perf_counter() - t0
    for nprobe in probes:
        idx.nprobe = nprobe
        times, got = [], []
        for q in qs:
            t0 = time.perf_counter()
            _d, ids = idx.search(q[None, :], k)
            times.append((time.perf_counter() - t0) * 1000)
            got.append(ids[0].tolist())
        report(f"faiss IVF{nlist},{kind}, nprobe {nprobe}", times, got, want, f"| build {build:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--topics", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--nlist", type=int, default=1024)
    ap.add_argument("--probes", default="8,16,32,64")
    ap.add_argument("--only", default="matrix,ivf,faiss-sq8")
    a = ap.parse_args()
    k = 10
    x = synthetic(a.rows + a.queries, a.dim, a.topics)
    qs, x = x[:a.queries], x[a.queries:]
    want = exact_top(x, qs, k)
    probes = [int(p) for p in a.probes.split(",")]
    print(f"{a.rows} rows, {a.dim}-d, {a.topics} topics, {a.queries} queries, load {os.getloadavg()}", flush=True)
    for what in a.only.split(","):
        if what == "matrix":
            run_matrix(x, qs, want, k)
        elif what == "ivf":
            run_ivf(x, qs, want, k, a.nlist, probes)
        elif what.startswith("faiss"):
            run_faiss(x, qs, want, k, a.nlist, probes, what.split("-")[1])


if __name__ == "__main__":
    main()
