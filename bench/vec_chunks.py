"""sqlite-vec's chunk size: one table per size, the same random vectors, timed side by side.

    python bench/vec_chunks.py --rows 100000 --sizes 1024,256,128,64 [--dir DIR]

vec0 keeps `chunk_size` vectors in one blob and reaches a vector by walking the blob's page chain. For each
size: inserts (1,000 a transaction, the writer's page cache), a vector read by id (300 random ids, warm),
sqlite-vec's own k-nearest scan, every vector read with its rowid (what loading the kept copies reads),
and the file's size. The tables are made in DIR (a temporary folder by default) and removed afterwards.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.index import db  # noqa: E402

DIM = 512
BATCH = 1000


def one_size(path: Path, rows: int, size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    con = db.connect(path)
    con.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, embedding float[{DIM}]"
                f" distance_metric=cosine, chunk_size={size})")
    t = time.perf_counter()
    for start in range(0, rows, BATCH):
        block = rng.standard_normal((min(BATCH, rows - start), DIM)).astype(np.float32)
        with db.transaction(con):
            for i, v in enumerate(block):
                con.execute("INSERT INTO chunks_vec(id, embedding) VALUES(?, ?)", (f"id{start + i}", db.vector_blob(v)))
    insert_us = (time.perf_counter() - t) / rows * 1e6
    con.close()
    con = db.connect(path, readonly=True)
    pick = random.Random(seed)
    ids = [f"id{pick.randrange(rows)}" for _ in range(300)]
    for cid in ids[:50]:
        con.execute("SELECT embedding FROM chunks_vec WHERE id = ?", (cid,)).fetchall()
    t = time.perf_counter()
    for cid in ids:
        con.execute("SELECT embedding FROM chunks_vec WHERE id = ?", (cid,)).fetchall()
    read_ms = (time.perf_counter() - t) / len(ids) * 1e3
    q = db.vector_blob(rng.standard_normal(DIM).astype(np.float32))
    knn = "SELECT id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = 10"
    con.execute(knn, (q,)).fetchall()
    t = time.perf_counter()
    for _ in range(3):
        con.execute(knn, (q,)).fetchall()
    knn_ms = (time.perf_counter() - t) / 3 * 1e3
    t = time.perf_counter()
    n = sum(1 for _ in con.execute("SELECT r.rowid, v.id, v.embedding FROM chunks_vec v"
                                   " JOIN chunks_vec_rowids r ON r.id = v.id"))
    all_s = time.perf_counter() - t
    chunks = con.execute("SELECT count(*) FROM chunks_vec_chunks").fetchall()[0][0]
    con.close()
    return {"size": size, "insert_us": round(insert_us, 1), "read_ms": round(read_ms, 3), "knn_ms": round(knn_ms, 1),
            "all_s": round(all_s, 2), "rows_read": n, "chunk_rows": chunks, "file_mb": round(path.stat().st_size / 1e6)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--sizes", default="1024,256,128,64")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print("chunk size | insert us/row | read by id ms | knn scan ms | all with rowid s | chunk rows | file MB")
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"vec{size}.db"
            r = one_size(path, args.rows, size, args.seed)
            print(f"{r['size']} | {r['insert_us']} | {r['read_ms']} | {r['knn_ms']} | {r['all_s']} | {r['chunk_rows']}"
                  f" | {r['file_mb']}", flush=True)
            for extra in ("", "-wal", "-shm"):
                Path(str(path) + extra).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
