"""mdmem next to basic-memory, memsearch and qmd, offline, on one corpus and query set."""
import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

import corpus as corpus_mod
import mdmem_peer
import report
import shared_peers
from common import PEERS_ROOT, REPO, SHARED, load_queries

ALL = ["basic-memory", "memsearch", "qmd", "mdmem"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--peers", default=",".join(ALL), help="comma list of " + ", ".join(ALL))
    ap.add_argument("--corpus", help="corpus dir; built with make_corpus.sh if missing or empty "
                                     "(default bench/.peers/corpus)")
    ap.add_argument("--out", help="JSON output (default bench/out/peers.json, peers-quick.json with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke test: first {corpus_mod.QUICK_FILES} corpus files, installed peers only")
    ap.add_argument("--mdmem-modes", default="fts,hybrid", help="mdmem search modes to time")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds allowed per install / peer run / step")
    a = ap.parse_args(argv)
    a.peers = [p.strip() for p in a.peers.split(",") if p.strip()]
    bad = [p for p in a.peers if p not in ALL]
    if bad:
        ap.error(f"unknown peer(s) {bad}; choose from {ALL}")
    return a


def machine():
    mem = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal:")), 0)
    return {"cores": os.cpu_count(), "mem_gib": round(mem / 2**20, 1), "platform": platform.platform(),
            "python": platform.python_version()}


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    if not (SHARED / "install.sh").exists():
        sys.exit(f"shared peer scripts not found in {SHARED} (set MDMEM_PEERS_DIR)")
    out = Path(a.out or REPO / "bench" / "out" / ("peers-quick.json" if a.quick else "peers.json")).resolve()
    full = corpus_mod.ensure(Path(a.corpus).resolve() if a.corpus else PEERS_ROOT / "corpus")
    tag = "work-quick" if a.quick else "work"
    corpus = corpus_mod.quick(full, PEERS_ROOT / "corpus-quick") if a.quick else full
    queries, edit_rel = load_queries(), corpus_mod.edit_file(corpus)
    logs = out.parent / (out.stem + "-logs")
    results = []
    for peer in a.peers:
        print(f"== {peer}", flush=True)
        if peer == "mdmem":
            r = mdmem_peer.run(corpus, PEERS_ROOT / tag / "mdmem", queries, edit_rel,
                               a.mdmem_modes.split(","), a.timeout)
        else:
            r = shared_peers.run(peer, corpus, PEERS_ROOT / tag / peer, queries, edit_rel, logs,
                                 a.timeout, allow_install=not a.quick)
        print(f"   {r['status']}" + (f": {r['reason']}" if r.get("reason") else ""), flush=True)
        results.append(r)
    rat = report.ratios(results)
    doc = {
        "date": started.date().isoformat(),
        "started_utc": started.isoformat(),
        "command": " ".join(["python", "bench/peers/run.py", *(sys.argv[1:] if argv is None else argv)]),
        "machine": machine(),
        "corpus": {**corpus_mod.describe(corpus), "quick": a.quick, "edited_file": edit_rel},
        "queries": {"n": len(queries), "top_k": 10, "hit": "expected path regex from queries.tsv in top 10"},
        "peers": {r["peer"]: r for r in results},
        "ratios_mdmem_over_peer": rat,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    md = report.table(results, rat)
    out.with_suffix(".md").write_text(md + "\n")
    print(f"\n{md}\n\nwrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


if __name__ == "__main__":
    main()
