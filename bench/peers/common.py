"""Paths, subprocess, timing and hit-rate helpers shared by the peer benchmark modules."""
import json
import os
import re
import signal
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PEERS_ROOT = REPO / "bench" / ".peers"
SHARED = Path(os.environ.get("MDMEM_PEERS_DIR") or REPO.parent / "shared" / "peers").resolve()
# lib.sh edits this file by default; every tool, mdmem included, gets the same edit
DEFAULT_EDIT_REL = "usr/share/doc/postgresql-common/README.md"
EDIT_TEXT = ("\n\n## Benchmark edit\n\nZebrafish quaternion marmalade: "
             "this paragraph was appended by the benchmark.\n")
EDIT_QUERY = "zebrafish quaternion marmalade"
TOP_K = 10
RESULT_COLS = ["label", "rc", "wall_s", "user_s", "sys_s", "maxrss_mb", "tree_peak_mb"]


def load_queries():
    """(query, path regex) pairs from the shared queries.tsv."""
    out = []
    for line in (SHARED / "queries.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            q, expect = line.split("\t")[:2]
            out.append((q, expect))
    return out


def run_logged(cmd, env, timeout, out_path, err_path=None):
    """Run cmd with output to files; kill its whole process group on timeout (hub look-ups can hang)."""
    err_path = err_path or out_path
    with open(out_path, "ab") as fo, open(err_path, "ab") as fe:
        p = subprocess.Popen([str(c) for c in cmd], stdout=fo, stderr=fe, env=env,
                             start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return "timeout"


def read_results(tsv):
    rows = {}
    if Path(tsv).exists():
        for line in Path(tsv).read_text().splitlines()[1:]:
            r = dict(zip(RESULT_COLS, line.split("\t")))
            rows[r["label"]] = {k: _num(v) for k, v in r.items()}
    return rows


def _num(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def timed(results, label, logs, cmd, env, timeout):
    """One command under the shared measure.py (wall, peak RSS, process-tree peak); returns its row."""
    results, logs = Path(results), Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    if not results.exists():
        results.write_text("\t".join(RESULT_COLS) + "\n")
    out, err = logs / f"{label}.out", logs / f"{label}.err"
    for f in (out, err):
        f.unlink(missing_ok=True)
    wrapper = [sys.executable, SHARED / "measure.py", results, label, out, err, "--", *cmd]
    rc = run_logged(wrapper, env, timeout, logs / f"{label}.measure")
    row = read_results(results).get(label)
    if rc == "timeout" or row is None:
        row = {"label": label, "rc": "timeout" if rc == "timeout" else f"measure rc {rc}",
               "wall_s": None, "maxrss_mb": None, "tree_peak_mb": None}
    return row


def peak(row):
    """Max of the largest process's RSS and the sampled tree peak (50 ms sampling misses short runs)."""
    vals = [v for v in (row.get("maxrss_mb"), row.get("tree_peak_mb")) if isinstance(v, (int, float))]
    return max(vals) if vals else None


def step(row):
    """The figures of one measured step as they go into the JSON."""
    keys = ("rc", "wall_s", "user_s", "sys_s", "maxrss_mb", "tree_peak_mb")
    return {**{k: row.get(k) for k in keys}, "peak_mb": peak(row)}


def first_json(text):
    """The first JSON value in text: some CLIs print a log line before their JSON."""
    dec = json.JSONDecoder()
    for i, c in enumerate(text):
        if c in "[{":
            try:
                return dec.raw_decode(text[i:])[0]
            except ValueError:
                continue
    raise ValueError("no JSON in output")


def hit(paths, expect):
    return any(re.search(expect, p or "") for p in paths[:TOP_K])


def query_summary(per_query):
    ok = [q for q in per_query if q["rc"] == 0 and q["wall_s"] is not None]
    walls = [q["wall_s"] for q in ok]
    return {
        "n": len(per_query),
        "failures": len(per_query) - len(ok),
        "mean_s": round(statistics.mean(walls), 3) if walls else None,
        "p50_s": round(statistics.median(walls), 3) if walls else None,
        "max_s": max(walls) if walls else None,
        "hits_at_10": sum(q["hit"] for q in per_query),
        "hit_rate_at_10": round(sum(q["hit"] for q in per_query) / len(per_query), 3) if per_query else None,
        "peak_rss_mb": max((q["peak_mb"] or 0 for q in ok), default=None),
    }


def tail(path, n=15):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""
