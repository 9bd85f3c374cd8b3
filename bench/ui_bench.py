"""The memory browser at 10,000 memories: what its searches take at typing speed, and (with Chromium) first paint
and typing -> results in the real page.

    HF_HUB_OFFLINE=1 python bench/ui_bench.py --memories 10000 --queries 20

Seeds MEMORIES dated memories in four spaces, starts `mdmem serve --http` on them and waits until every vector
(and every ranking vector) is made, logs in as the page does (a one-time link, then its cookie and CSRF value),
then types each query a key every --key-ms: each prefix is one POST /v1/ui/search, the call the page makes,
timed over loopback, with the daemon's CPU per search (Linux: what a loaded machine's wait for a core leaves out);
POST /v1/ui/memories (the memories view's refresh) is timed too. When node, Chromium and the
e2e driver (tests/e2e/.cache/driver, made by `make e2e`) are there, bench/ui_page.mjs also loads the page from a
fresh link (first contentful paint) and types the queries into its search box (keystroke -> results drawn).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from http_mixed_load import WORDS, pct, start_daemon, stop_daemon  # noqa: E402

SPACES = ("alice", "bob", "carol", "dan")
QUERIES = ("walnut kettle", "harbour lantern", "glacier meadow", "苹果 月亮", "violin orbit", "falcon ribbon",
           "钢琴 森林", "marble oyster", "tulip anchor", "canyon ember")
DRIVER = REPO / "tests" / "e2e" / ".cache" / "driver"


def seed(home: Path, memories: int) -> None:
    """Dated memories, a note a month per space, as `add` writes them: the browser lists and searches these."""
    rng = random.Random(40)
    per_note: dict[Path, list[str]] = {}
    for i in range(memories):
        space, month, day = SPACES[i % len(SPACES)], 1 + (i // 97) % 12, 1 + i % 28
        note = home / "spaces" / space / "journal" / f"2025-{month:02d}.md"
        per_note.setdefault(note, []).append(f"- 2025-{month:02d}-{day:02d}: " + " ".join(rng.sample(WORDS, 6)))
    for note, lines in per_note.items():
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("---\ntype: episodic\n---\n\n# Journal\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


class Page:
    """The page's side of the HTTP API: its cookie and CSRF value from a one-time link."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.host = f"127.0.0.1:{port}"
        self.cookie = ""
        status, headers, _ = self.call("GET", self.link().split(self.host, 1)[1])
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";")[0]
        self.csrf = json.loads(self.call("GET", "/ui/session")[2])["csrf"]

    def link(self) -> str:
        status, _, body = self.call("POST", "/v1/ui/link", {}, bearer=True)
        assert status == 200, body
        return json.loads(body)["url"]

    def call(self, method: str, path: str, body=None, bearer: bool = False):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Host": self.host, "Content-Type": "application/json"}
        if bearer:
            headers["Authorization"] = f"Bearer {self.token}"
        elif self.cookie:
            headers.update({"Cookie": self.cookie, "X-Mdmem-CSRF": getattr(self, "csrf", "")})
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()


def filled(page: Page) -> bool:
    status, _, body = page.call("GET", "/v1/ui/status")
    if status != 200:
        return False
    s = json.loads(body)["stores"]["global"]
    return s["pending"] == 0 and s["vectors_pending"] == 0 and s["chunks"] > 0 and s["e5"][0] >= s["e5"][1]


def cpu_s(pid: int) -> float | None:
    """The CPU seconds a process has used (Linux /proc), or None: a figure the machine's load barely moves."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def typed(page: Page, queries, key_ms: float, pid: int) -> dict:
    """Each prefix of each query as the page would ask it, a key every key_ms: answer times in ms, and the
    daemon's CPU per search (on a loaded machine the wall times wait for a core; the CPU does not)."""
    times, empty = [], 0
    cpu0 = cpu_s(pid)
    for query in queries:
        for n in range(1, len(query) + 1):
            if not query[:n].strip():
                continue
            t = time.perf_counter()
            status, _, body = page.call("POST", "/v1/ui/search", {"query": query[:n], "space": SPACES[0], "limit": 10})
            took = (time.perf_counter() - t) * 1000
            assert status == 200, body
            empty += not json.loads(body)["results"]
            times.append(took)
            time.sleep(max(0.0, key_ms / 1000 - took / 1000))
    cpu1 = cpu_s(pid)
    cpu = None if cpu0 is None or cpu1 is None else round((cpu1 - cpu0) * 1000 / len(times), 1)
    return {"requests": len(times), "empty_answers": empty, **summary(times), "daemon_cpu_ms_per_search": cpu}


def summary(times: list[float]) -> dict:
    return {k: round(pct(times, q), 1) for k, q in (("p50_ms", .5), ("p95_ms", .95), ("max_ms", 1.0))}


def in_chromium(page: Page, queries, key_ms: float) -> dict | None:
    if not (shutil.which("node") and Path("/usr/bin/chromium").exists() and (DRIVER / "node_modules").is_dir()):
        return None
    env = {**os.environ, "DRIVER": str(DRIVER), "LOGIN_URL": page.link(), "QUERIES": json.dumps(list(queries)),
           "KEY_MS": str(key_ms)}
    out = subprocess.run(["node", str(REPO / "bench" / "ui_page.mjs")], env=env, capture_output=True, text=True,
                         timeout=600)
    if out.returncode != 0:
        return {"error": out.stderr.strip()[-800:]}
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {"first_paint_ms": round(got["first_paint_ms"], 1), "typing_to_results": summary(got["typing_ms"]),
            "its_last_search": summary(got["last_search_ms"]), "queries": len(got["typing_ms"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=20, help="queries typed (the list repeats)")
    ap.add_argument("--key-ms", type=float, default=120.0, help="time between keystrokes (a fast typist: 120)")
    ap.add_argument("--keep", type=Path, help="keep the seeded store in this folder, and use it if it is there "
                    "(a rerun skips the seeding and the first build)")
    args = ap.parse_args()
    queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
    base = args.keep or Path(tempfile.mkdtemp(prefix="mdmem-ui-bench-"))
    home, run = base / "home", base / "run"
    run.mkdir(parents=True, exist_ok=True)
    if not home.exists():
        seed(home, args.memories)
    t0 = time.perf_counter()
    proc, port = start_daemon(home, run)
    try:
        page = None
        while page is None and time.perf_counter() - t0 < 600:
            try:
                page = Page(port, (home / ".http-token").read_text().strip())
            except (OSError, AssertionError, KeyError):
                time.sleep(0.3)
        while not filled(page):
            time.sleep(1)
        ready_s = time.perf_counter() - t0
        chunks = json.loads(page.call("GET", "/v1/ui/status")[2])["stores"]["global"]["chunks"]
        lists = []
        for _ in range(20):
            t = time.perf_counter()
            assert page.call("POST", "/v1/ui/memories", {"space": SPACES[0], "limit": 100})[0] == 200
            lists.append((time.perf_counter() - t) * 1000)
        out = {"memories": args.memories, "load": round(os.getloadavg()[0], 1), "chunks": chunks, "ready_s": round(ready_s, 1), "key_ms": args.key_ms,
               "api_search_per_keystroke": typed(page, queries, args.key_ms, proc.pid), "api_memories_list": summary(lists),
               "chromium": in_chromium(page, queries, args.key_ms)}
    finally:
        stop_daemon(proc)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
