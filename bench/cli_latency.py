"""Wall time of whole `mdmem` commands as a user or an agent runs them: through a running daemon and one-shot.

    python bench/cli_latency.py --home STORE            # an indexed store, e.g. the three dev corpora
    python bench/cli_latency.py --home STORE --runs 15 --out bench/out/cli.json

Each command is a new process; its wall time and CPU time come from the OS (os.wait4's rusage),
medians over --runs, the commands interleaved so a change in the machine's load hits them all.
First without a daemon (one-shot: the command opens the index and, for hybrid, loads the model),
then with `mdmem serve` running on the store (the command is a thin socket client).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from daemon_bench import wait_ready  # noqa: E402
from eval import cli_env  # noqa: E402
from indexer import config as config_mod  # noqa: E402
from indexer.remote import socket_path  # noqa: E402

COMMANDS = {
    "python -c pass": None,
    "search fts": ["search", "--mode", "fts", "--limit", "10", "{q}"],
    "search hybrid": ["search", "--limit", "10", "{q}"],
    "recall": ["recall", "{q}"],
    "status": ["status"],
}
QUERIES = ["Caroline adoption agency", "北京大学的校长是谁", "Melanie painting sunrise", "数据库迁移事故"]


def run_once(home: Path, args: list[str] | None, env: dict) -> dict:
    """One process: wall seconds from fork to exit, user+system CPU seconds from the kernel.
    args None: a bare interpreter (`python -c pass`), the floor under every command."""
    argv = [sys.executable, "-c", "pass"] if args is None else [sys.executable, "-m", "indexer", "--home", str(home), *args]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"mdmem {' '.join(args)} failed: {proc.stderr.read().decode()[-500:]}")
    proc.stderr.close()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime}


def measure(home: Path, env: dict, runs: int, commands: dict) -> dict:
    times: dict[str, list[dict]] = {name: [] for name in commands}
    for i in range(runs):
        for name, template in commands.items():  # interleaved: load changes hit every command alike
            q = QUERIES[i % len(QUERIES)]
            times[name].append(run_once(home, template and [a.format(q=q) for a in template], env))
    return {name: {"median_wall_s": round(statistics.median(t["wall"] for t in ts), 3),
                   "median_cpu_s": round(statistics.median(t["cpu"] for t in ts), 3),
                   "min_wall_s": round(min(t["wall"] for t in ts), 3), "runs": len(ts)}
            for name, ts in times.items()}


def with_daemon(home: Path, env: dict, fn):
    sock = socket_path(config_mod.load(home=home, env=env), env)
    log = home.parent / "cli-latency-serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve"], env=env,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wait_ready(proc, sock, timeout=900)
        return fn()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True, help="an indexed store")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "cli-latency.json")
    args = ap.parse_args()
    env = cli_env({})
    # an installed mdmem runs from compiled bytecode (pip compiles it; Python caches it after the first
    # run), so the sources are compiled once here and an environment that forbids the cache is undone
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(REPO / "indexer"), quiet=1)
    res = {"load_before": os.getloadavg()}
    res["one_shot"] = measure(args.home, env, args.runs, {k: v for k, v in COMMANDS.items() if k not in ("status", "python -c pass")})
    res["daemon"] = with_daemon(args.home, env, lambda: measure(args.home, env, args.runs, COMMANDS))
    res["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print("where | command | median wall s | median CPU s | min wall s")
    for where in ("one_shot", "daemon"):
        for name, r in res[where].items():
            print(f"{where} | {name} | {r['median_wall_s']} | {r['median_cpu_s']} | {r['min_wall_s']}")
    print(f"load average before {res['load_before'][0]:.1f}, after {res['load_after'][0]:.1f}; wrote {args.out}")


if __name__ == "__main__":
    main()
