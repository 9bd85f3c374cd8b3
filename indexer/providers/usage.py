"""The private usage log of model providers (calls, texts, tokens, time) and its totals with estimated cost."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from indexer.private_files import open_private

FILE = "usage.jsonl"
# Estimated US dollars per million input tokens, from the providers' public price lists (2025); an
# estimate only: prices change, and a local server (Ollama, LM Studio, vLLM) costs nothing here.
PRICES = (
    ("openai", "text-embedding-3-small", 0.02), ("openai", "text-embedding-3-large", 0.13),
    ("openai", "text-embedding-ada-002", 0.10), ("voyage", "voyage-3.5", 0.06), ("voyage", "voyage-3.5-lite", 0.02),
    ("voyage", "voyage-3-large", 0.18), ("voyage", "voyage-3", 0.06), ("voyage", "voyage-3-lite", 0.02),
    ("gemini", "gemini-embedding-001", 0.15),
)


class UsageLog:
    """Appends one JSON line per provider call to <home>/usage.jsonl, readable by this user only."""

    def __init__(self, home: Path):
        self.path = Path(home) / FILE
        self._lock = threading.Lock()

    def record(self, provider: str, model: str, role: str, texts: int, tokens: int, seconds: float, ok: bool):
        line = json.dumps({"t": round(time.time(), 3), "provider": provider, "model": model, "role": role,
                           "texts": texts, "tokens": tokens, "seconds": round(seconds, 4), "ok": ok})
        try:
            with self._lock:
                fd = open_private(self.path)
                try:
                    os.write(fd, (line + "\n").encode())  # one write of a short line: appends do not interleave
                finally:
                    os.close(fd)
        except OSError:
            pass  # a read-only or missing home: the call itself still counts for the user


def price_per_million(provider: str, model: str) -> float | None:
    """The estimated price, 0 for local providers, None when unknown."""
    if provider == "ollama":
        return 0.0
    for p, m, price in PRICES:
        if p == provider and m == model.rsplit("/", 1)[-1]:
            return price
    return None


def totals(home: Path, since: float = 0.0) -> list[dict]:
    """One row per (provider, model, role): calls, failed calls, texts, tokens, seconds, estimated cost."""
    rows: dict[tuple, dict] = {}
    try:
        text = (Path(home) / FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    for line in text.splitlines():
        try:
            e = json.loads(line)
            if e["t"] < since:
                continue
            key = (e["provider"], e["model"], e["role"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a crash
        r = rows.setdefault(key, {"provider": key[0], "model": key[1], "role": key[2], "calls": 0, "failed": 0,
                                  "texts": 0, "tokens": 0, "seconds": 0.0})
        r["calls"] += 1
        r["failed"] += 0 if e.get("ok") else 1
        r["texts"] += int(e.get("texts") or 0)
        r["tokens"] += int(e.get("tokens") or 0)
        r["seconds"] += float(e.get("seconds") or 0)
    out = []
    for r in rows.values():
        price = price_per_million(r["provider"], r["model"])
        r["seconds"] = round(r["seconds"], 3)
        r["estimated_cost_usd"] = None if price is None else round(r["tokens"] * price / 1e6, 10)
        out.append(r)
    return sorted(out, key=lambda r: (r["provider"], r["model"], r["role"]))
