"""Daemon benchmark: edit->searchable latency, idle RSS/CPU, reconcile time of unchanged files, bursts.

    python bench/daemon_bench.py --files 10000 --edits 60
    python bench/daemon_bench.py --burst 10000 [--embedder none]
    python bench/daemon_bench.py --home W/pad1000000/home --edits 30   # a store built earlier (bench/grow_store.py)

Builds a temporary store of FILES one-paragraph notes, indexes it, starts `mdmem serve` on
it, then edits random notes one at a time and polls the daemon's socket until the new
text is found. Prints one JSON object (and a Markdown table with --markdown).
With --burst N it instead starts the daemon on an empty store, creates N notes as fast as
Python can, and times creation and the wait until the daemon has indexed every one.
With --home it uses that store as it is (a padded 1M-chunk copy, say): the start to the first answer
(a hybrid search sent every 0.1 s from launch), to the kept vectors and words answering, then the edits,
each a new note, and what each edit costs a search that follows it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from indexer import config  # noqa: E402
from indexer.memory import Memory  # noqa: E402
from indexer.remote import Client, socket_path  # noqa: E402

TOPICS = ["budget", "deploy", "backup", "migration", "hiring", "roadmap", "incident", "vendor", "travel", "garden"]


def note_text(i: int, token: str = "") -> str:
    topic = TOPICS[i % len(TOPICS)]
    return (f"# Note {i}\n\nMeeting note {i} about the {topic}: we agreed on item {i * 7} and the window "
            f"for service {i % 97}. {token}\n")


def make_store(base: Path, files: int) -> tuple[Path, Path]:
    home, project = base / "home", base / "proj"
    (project / ".mdmem").mkdir(parents=True)
    home.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        p = home / "notes" / f"d{i % 100:02}" / f"n{i:05}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(note_text(i), encoding="utf-8")
    return home, project


def write_burst(folder: Path, n: int, start: int = 0, tag: str = "burst") -> float:
    """n small notes spread over 100 sub-folders, written as fast as Python can; returns the seconds taken."""
    t0 = time.perf_counter()
    for i in range(start, start + n):
        d = folder / f"d{i % 100:02}"
        if i - start < 100:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"{tag}{i:05}.md").write_text(f"# {tag} {i}\n\n{tag} note {i} token{tag}{i}\n", encoding="utf-8")
    return time.perf_counter() - t0


def indexed(status: dict, store: str, files: int) -> bool:
    """The daemon's status says the store holds exactly `files` notes and has nothing left to do."""
    s = status.get(store) or {}
    return s.get("files") == files and s.get("pending") == 0 and not s.get("busy")


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def wait_ready(proc, sock: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("daemon exited early")
        if sock.exists():
            try:
                c = Client(sock, timeout=30)
                st = c.call("status")
                c.close()
                if st and all(v["pid"] == proc.pid and v["last_sync"] and not v["busy"] and v["pending"] == 0
                              for v in st.values()):
                    return
            except OSError:
                pass
        time.sleep(0.1)
    raise SystemExit("daemon not ready in time")


def burst(n: int, embedder: str) -> dict:
    """Start `mdmem serve` on an empty store, create n notes at once, time until all are indexed."""
    with tempfile.TemporaryDirectory(prefix="mdmem-burst-") as tmp:
        base = Path(tmp)
        run_dir = base / "run"
        run_dir.mkdir()
        env = {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), "PYTHONPATH": str(REPO)}
        os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
        home, project = make_store(base, 0)
        sock = socket_path(config.load(home=home, project=project, env={}))
        log = base / "serve.log"
        proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "--project", str(project),
                                 "--embedder", embedder, "serve"],
                                env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=str(REPO))
        try:
            wait_ready(proc, sock)
            t0 = time.perf_counter()
            out = {"burst": n, "embedder": embedder, "create_s": round(write_burst(home / "burst", n), 2)}
            client = Client(sock, timeout=60)
            while not indexed(client.call("status"), "global", n):
                time.sleep(0.1)
            out["created_to_indexed_s"] = round(time.perf_counter() - t0, 1)
            client.close()
            text = log.read_text()
            out["overflowed"] = '"watch_overflow"' in text
            out["traceback"] = "Traceback" in text
        finally:
            proc.send_signal(signal.SIGTERM)
            out["exit_code"] = proc.wait(timeout=120)
    return out


def _status(client) -> dict:
    return client.call("status")["global"]


def _edit_text(k: int, token: str) -> str:
    topic = TOPICS[k % len(TOPICS)]
    return f"# Edit {k}\n\n- 2026-11-26: we moved the {topic} review to Friday ({token}) after the call with Dana\n"


def existing(home: Path, args) -> dict:
    """Start, edit -> searchable and the first search after each edit, on a store built earlier. Edited notes
    get their text back and new notes are removed at the end, so the store is left as it was found."""
    run_dir = Path(tempfile.mkdtemp(prefix="mdmem-run-"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), "PYTHONPATH": str(REPO)}
    os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
    sock = socket_path(config.load(home=home, env={}))
    out: dict = {"home": str(home), "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve", "--debounce-ms",
                             str(args.debounce_ms)], env=env, stdout=open(home.parent / "serve-bench.log", "w"),
                            stderr=subprocess.STDOUT, cwd=str(REPO))
    created, edited = [], {}
    try:
        client = None
        while client is None:
            if proc.poll() is not None or time.perf_counter() - t0 > 600:
                raise SystemExit("daemon did not answer")
            try:
                if sock.exists():
                    client = Client(sock, timeout=120)
                    client.call("search", {"query": "what did we decide about the budget", "limit": 10, "bump": False})
            except OSError:
                client = None
            time.sleep(0.1)
        out["start_to_first_answer_s"] = round(time.perf_counter() - t0, 2)
        while _status(client).get("kept_vectors") == "loading" or _status(client).get("kept_words") == "loading":
            time.sleep(0.1)
        out["start_to_kept_copies_s"] = round(time.perf_counter() - t0, 2)
        while _status(client).get("busy"):
            time.sleep(0.2)
        out["start_to_reconciled_s"] = round(time.perf_counter() - t0, 2)
        out["chunks"] = _status(client)["chunks"]
        out["idle_rss_mib"] = round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)
        synth = sorted((home / "synth").glob("*.md"))[:args.edits] if (home / "synth").is_dir() else []
        rng = random.Random(7)
        latencies, after = [], []
        for k in range(args.edits):
            token = f"zqxedit{k}w{rng.randrange(10**6)}"
            if k % 2 and synth:  # an existing note gets a line more
                path = synth[k % len(synth)]
                edited.setdefault(path, path.read_text(encoding="utf-8"))
                path.write_text(edited[path] + f"\nLater note: {token} settled it.\n", encoding="utf-8")
            else:
                path = home / "bench-edits" / f"e{k:03d}.md"
                path.parent.mkdir(exist_ok=True)
                path.write_text(_edit_text(k, token), encoding="utf-8")
                created.append(path)
            t_edit = time.perf_counter()
            while True:
                hits = client.call("search", {"query": token, "mode": "fts", "limit": 1, "bump": False})
                if hits and token in hits[0]["content"]:
                    break
                if time.perf_counter() - t_edit > 30:
                    raise SystemExit(f"edit {k} not searchable within 30 s")
                time.sleep(0.01)
            latencies.append(time.perf_counter() - t_edit)
            t1 = time.perf_counter()  # what following the write costs the next question
            client.call("search", {"query": f"when is the {TOPICS[k % len(TOPICS)]} review", "limit": 10, "bump": False})
            after.append(time.perf_counter() - t1)
            time.sleep(0.3)
        out["edit_to_searchable_ms"] = {"p50": round(1000 * statistics.median(latencies), 1),
                                        "p95": round(1000 * percentile(latencies, 0.95), 1),
                                        "max": round(1000 * max(latencies), 1)}
        out["hybrid_after_edit_ms"] = {"p50": round(1000 * statistics.median(after), 1),
                                       "p95": round(1000 * percentile(after, 0.95), 1)}
        out["load_after"] = os.getloadavg()
        for path, text in edited.items():
            path.write_text(text, encoding="utf-8")
        for path in created:
            path.unlink()
        with contextlib.suppress(OSError):
            (home / "bench-edits").rmdir()
        time.sleep(2)
        while _status(client).get("busy") or _status(client).get("pending"):
            time.sleep(0.2)
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out["exit_code"] = proc.wait(timeout=120)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--edits", type=int, default=60)
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    ap.add_argument("--debounce-ms", type=int, default=300)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--burst", type=int, help="only time N notes created at once under the running daemon")
    ap.add_argument("--embedder", default="none", help="model for --burst (default none: the watcher, not the model)")
    ap.add_argument("--home", type=Path, help="use this store as it is (start, edits) instead of building one")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.home:
        print(json.dumps(existing(args.home, args)))
        return
    if args.burst:
        print(json.dumps(burst(args.burst, args.embedder)))
        return
    out: dict = {"files": args.files, "edits": args.edits, "debounce_ms": args.debounce_ms}
    with tempfile.TemporaryDirectory(prefix="mdmem-bench-") as tmp:
        base = Path(tmp)
        run_dir = base / "run"
        run_dir.mkdir()
        env = {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), "PYTHONPATH": str(REPO)}
        os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
        home, project = make_store(base, args.files)
        cfg = config.load(home=home, project=project, env={})
        t0 = time.perf_counter()
        with Memory(cfg=cfg) as mem:
            mem.index()
        out["initial_index_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        with Memory(cfg=cfg) as mem:
            rep = mem.index()[0]
        out["reconcile_unchanged_inprocess_s"] = round(time.perf_counter() - t0, 3)
        out["reconcile_unchanged_sync_s"] = round(rep.seconds, 3)
        log = base / "serve.log"
        sock = socket_path(cfg)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "--project", str(project),
                                 "serve", "--debounce-ms", str(args.debounce_ms)],
                                env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=str(REPO))
        try:
            wait_ready(proc, sock)
            out["daemon_start_to_ready_s"] = round(time.perf_counter() - t0, 2)
            for line in log.read_text().splitlines():
                ev = json.loads(line) if line.startswith("{") else {}
                if ev.get("event") == "reconciled" and ev.get("store") == "global":
                    out["reconcile_unchanged_daemon_s"] = round(ev["seconds"], 3)
            p = psutil.Process(proc.pid)
            time.sleep(3)  # let start-up work settle
            c0 = p.cpu_times()
            time.sleep(args.idle_seconds)
            c1 = p.cpu_times()
            busy = (c1.user - c0.user) + (c1.system - c0.system)
            out["idle_cpu_percent"] = round(100 * busy / args.idle_seconds, 2)
            out["idle_rss_mib"] = round(p.memory_info().rss / 2**20, 1)
            client = Client(sock, timeout=60)
            rng = random.Random(7)
            latencies = []
            for k in range(args.edits):
                i = rng.randrange(args.files)
                token = f"zqxedit{k}w{i}"
                path = home / "notes" / f"d{i % 100:02}" / f"n{i:05}.md"
                path.write_text(note_text(i, token), encoding="utf-8")
                t_edit = time.perf_counter()
                deadline = t_edit + 30
                while time.perf_counter() < deadline:
                    hits = client.call("search", {"query": token, "mode": "fts", "limit": 1, "bump": False})
                    if hits and hits[0]["uri"].endswith(f"n{i:05}.md"):
                        break
                    time.sleep(0.01)
                else:
                    raise SystemExit(f"edit {k} not searchable within 30 s")
                latencies.append(time.perf_counter() - t_edit)
            client.close()
            out["edit_to_searchable_ms"] = {
                "p50": round(1000 * statistics.median(latencies), 1),
                "p95": round(1000 * percentile(latencies, 0.95), 1),
                "max": round(1000 * max(latencies), 1)}
            t0 = time.perf_counter()
            q = Client(sock, timeout=60)
            for _ in range(20):
                q.call("search", {"query": "quarterly budget deploy window", "limit": 10, "bump": False})
            out["hybrid_search_via_socket_ms"] = round(1000 * (time.perf_counter() - t0) / 20, 1)
            q.close()
            out["rss_after_edits_mib"] = round(p.memory_info().rss / 2**20, 1)
        finally:
            proc.send_signal(signal.SIGTERM)
            out["exit_code"] = proc.wait(timeout=120)
    print(json.dumps(out))
    if args.markdown:
        e = out["edit_to_searchable_ms"]
        print(f"\n| metric | value |\n|---|---|\n| files | {args.files} |\n"
              f"| edit→searchable p50 / p95 / max ({args.edits} edits, debounce {args.debounce_ms} ms) | "
              f"{e['p50']} / {e['p95']} / {e['max']} ms |\n"
              f"| idle RSS | {out['idle_rss_mib']} MiB |\n| idle CPU ({args.idle_seconds:.0f} s) | {out['idle_cpu_percent']} % |\n"
              f"| reconcile of unchanged files (daemon start-up) | {out.get('reconcile_unchanged_daemon_s')} s |\n"
              f"| reconcile of unchanged files (`mdmem index`) | {out['reconcile_unchanged_sync_s']} s |\n"
              f"| hybrid search through the socket | {out['hybrid_search_via_socket_ms']} ms |")


if __name__ == "__main__":
    main()
