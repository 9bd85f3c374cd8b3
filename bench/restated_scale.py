"""The restatement check of a big build: time per batch of new texts and the finder's memory, at a given row count."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.sync import restated  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=96, help="new texts per batch")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--full", action="store_true", help="also time the pass over every row (the path below LISTS_AT)")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    scale = (1.0 / np.sqrt(np.arange(1, 513))).astype(np.float32)
    centres = rng.standard_normal((20_000, 512), dtype=np.float32) * scale
    rss0 = psutil.Process().memory_info().rss
    finder = restated.RestatementFinder(None, 0.85)
    finder._mat, finder._scale = np.zeros((16, 512), dtype=np.int8), np.zeros(16, dtype=np.float32)
    t0 = time.perf_counter()
    for i in range(0, args.rows, 50_000):
        m = min(50_000, args.rows - i)
        x = centres[rng.integers(0, 20_000, m)] + 0.6 * rng.standard_normal((m, 512), dtype=np.float32) * scale
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        finder._pending = [(f"{i + j:016x}", f"n/{(i + j) // 5}.md", x[j]) for j in range(m)]
        finder._flush()
    fill = time.perf_counter() - t0
    q = centres[rng.integers(0, 20_000, args.batch * args.batches)] + 0.3 * rng.standard_normal(
        (args.batch * args.batches, 512), dtype=np.float32) * scale
    fresh = [{f"q{b}-{j}": q[b * args.batch + j] for j in range(args.batch)} for b in range(args.batches)]
    t0 = time.perf_counter()
    finder.start_batch(fresh[0])  # the first batch trains the lists (or fits the prefilter)
    first = time.perf_counter() - t0
    times = []
    for f in fresh[1:]:
        t0 = time.perf_counter()
        finder.start_batch(f)
        times.append(time.perf_counter() - t0)
    rss = psutil.Process().memory_info().rss
    print(f"{args.rows} rows: matrix filled in {fill:.0f} s; first batch (training) {first:.1f} s;"
          f" then {1000 * np.median(times):.0f} ms a batch of {args.batch} (median of {len(times)});"
          f" finder RSS {(rss - rss0) / 2**20:.0f} MB; path {'lists' if finder._lists is not None else 'prefilter'};"
          f" load {os.getloadavg()[0]:.1f}", flush=True)
    if args.full:
        restated.LISTS_AT = 10**12
        finder._lists, finder._basis = None, None
        t0 = time.perf_counter()
        finder._refit()
        for f in fresh[1:4]:
            finder.start_batch(f)
        print(f"the prefilter's pass over every row: {1000 * (time.perf_counter() - t0) / 3:.0f} ms a batch"
              f" (fit included), load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
