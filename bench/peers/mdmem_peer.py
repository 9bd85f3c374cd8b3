"""Run mdmem through its CLI with the same steps, measurement and queries as the shared peer scripts."""
import compileall
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import (EDIT_QUERY, EDIT_TEXT, REPO, TOP_K, hit, peak, query_summary, step, tail, timed)

CLI = REPO / ".venv" / "bin" / "mdmem"


def _hits(out):
    # `mdmem search --json`: {"version", "query", "results": [{"uri", "start_line", "end_line", "score", ...}]}
    return [h.get("uri", "") for h in json.loads(out)["results"]]


def _batch(out):
    # `mdmem search --batch FILE --json`: one JSON line {"qid", "results": [hits]} per query
    res = {}
    for line in out.splitlines():
        if line.strip().startswith("{"):
            d = json.loads(line)
            res[d["qid"]] = [h.get("uri", "") for h in d["results"]]
    return res


def probe():
    """None if the CLI answers, else why not."""
    if not CLI.exists():
        return f"mdmem CLI not found at {CLI.relative_to(REPO)} (install the project into .venv first)"
    try:
        r = subprocess.run([CLI, "--help"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "`mdmem --help` did not answer within 120 s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return f"`mdmem --help` failed (rc {r.returncode}): {last}"
    return None


def run(corpus, work, queries, edit_rel, modes, timeout):
    res = {"peer": "mdmem", "mode": "mdmem CLI, one process per query; modes " + ", ".join(modes)}
    why = probe()
    if why:
        return {**res, "status": "unavailable", "reason": why}
    work = Path(work)
    shutil.rmtree(work, ignore_errors=True)
    project, home, logs = work / "project", work / "home", work / "logs"
    notes = project / ".mdmem" / "corpus"
    home.mkdir(parents=True)
    shutil.copytree(corpus, notes, symlinks=False)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1")
    # an installed mdmem runs from compiled bytecode, as the peers' own installs do
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(REPO / "indexer"), quiet=1)
    base = [CLI, "--home", home, "--project", project]
    results = work / "results.tsv"

    def t(label, *args):
        return timed(results, label, logs, [*base, *args], env, timeout)

    full = t("index_full", "index")
    if full["rc"] != 0:
        return {**res, "status": "failed",
                "reason": f"index rc {full['rc']}: " + tail(logs / "index_full.err")}
    noop = t("reindex_noop", "index")
    time.sleep(1.1)  # a new mtime even on coarse file systems, as lib.sh does
    with open(notes / edit_rel, "a", encoding="utf-8") as f:
        f.write(EDIT_TEXT)
    one = t("reindex_one_edit", "index")
    after = t("after_edit_query", "search", EDIT_QUERY, "--json", "--limit", str(TOP_K), "--mode", "fts")
    res.update(status="ok", index_full=step(full), reindex_noop=step(noop), reindex_one_edit=step(one),
               edit_visible=_edit_rank(logs / "after_edit_query.out", edit_rel, after["rc"]),
               index_size=_du(home, project / ".mdmem"), by_mode={})
    batch_file = work / "queries.jsonl"
    batch_file.write_text("".join(json.dumps({"qid": f"q{i:02d}", "query": q}) + "\n"
                                  for i, (q, _) in enumerate(queries, 1)))
    for mode in modes:
        per_query = _queries(t, logs, queries, mode, mode)
        res["by_mode"][mode] = {"queries": query_summary(per_query), "per_query": per_query,
                                "batch": _run_batch(t, logs, batch_file, queries, mode)}
    _through_daemon(t, logs, base, env, queries, modes, res)
    return res


def _through_daemon(t, logs, base, env, queries, modes, res):
    """The same CLI queries with `mdmem serve` running: the CLI is then a thin client of the daemon."""
    sys.path.insert(0, str(REPO / "bench"))
    from daemon_bench import wait_ready
    from indexer import config as config_mod
    from indexer.remote import socket_path
    home, project = (Path(base[base.index(flag) + 1]) for flag in ("--home", "--project"))
    sock = socket_path(config_mod.load(home=home, project=project, env=env), env)
    proc = subprocess.Popen([*base, "serve"], env=env, stdout=open(logs / "serve.log", "w"), stderr=subprocess.STDOUT)
    try:
        wait_ready(proc, sock, timeout=600)
        for mode in modes:
            res["by_mode"][mode]["through_daemon"] = query_summary(_queries(t, logs, queries, mode, f"daemon_{mode}"))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)


def _queries(t, logs, queries, mode, prefix):
    """Each query in its own `mdmem search` process: its wall time, peak memory and whether it hit."""
    per_query = []
    for i, (q, expect) in enumerate(queries, 1):
        label = f"{prefix}_{i:02d}"
        row = t(label, "search", q, "--json", "--limit", str(TOP_K), "--mode", mode)
        try:
            uris = _hits((logs / f"{label}.out").read_text())
        except (ValueError, AttributeError, TypeError):
            uris = []
        per_query.append({"query": q, "expect": expect, "rc": row["rc"], "wall_s": row["wall_s"],
                          "peak_mb": peak(row), "hit": hit(uris, expect), "top": uris[:TOP_K]})
    return per_query


def _run_batch(t, logs, batch_file, queries, mode):
    """All 20 queries in one process: the warm per-query cost next to the one-process-per-query figure."""
    label = f"batch_{mode}"
    row = t(label, "search", "--batch", batch_file, "--json", "--limit", str(TOP_K), "--mode", mode)
    out = {**step(row), "per_query_s": round(row["wall_s"] / len(queries), 4) if row["wall_s"] else None}
    if row["rc"] != 0:
        return {**out, "error": tail(logs / f"{label}.err", 5)}
    try:
        got = _batch((logs / f"{label}.out").read_text())
    except (ValueError, KeyError, TypeError) as e:
        return {**out, "error": f"unparsable batch output: {e}"}
    out["hits_at_10"] = sum(hit(got.get(f"q{i:02d}", []), exp) for i, (_, exp) in enumerate(queries, 1))
    return out


def _edit_rank(out, edit_rel, rc):
    if rc != 0:
        return None
    try:
        uris = _hits(Path(out).read_text())
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    ranks = [i for i, u in enumerate(uris, 1) if edit_rel in u]
    return {"query": EDIT_QUERY, "rank": ranks[0] if ranks else None}


def _du(*dirs):
    """Bytes mdmem wrote next to the notes and in its home (the copied notes are not counted)."""
    total = 0
    for d in dirs:
        for p in Path(d).rglob("*"):
            if p.is_file() and "corpus" not in p.relative_to(d).parts[:1]:
                total += p.stat().st_size
    return f"{total / 1e6:.1f}M"
