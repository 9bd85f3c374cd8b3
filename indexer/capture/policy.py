"""Which capture policy a call runs (per call, mem0's `infer`, the space's setting, the global one), and the
items it makes of a turn; an LLM that fails leaves the turn raw and marked pending for a later pass."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from indexer.capture import llm_extract, triggers
from indexer.capture.triggers import Item
from indexer.config import CAPTURES
from indexer.errors import InputError, ProviderError
from indexer.notes.append import replace_whole
from indexer.private_files import open_private

POLICIES = CAPTURES
PENDING_FILE = ".capture-pending.jsonl"  # a dot file beside the notes: never indexed
RAW_TYPE = "episodic"  # a raw turn is a journal line, as every integration wrote before capture policies
# the pending file's one lock: HTTP handlers append on a thread pool while the later pass rewrites it whole
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Captured:
    """What a policy made of a turn: the items to add, the policy that made them, and why the LLM's were not."""

    items: list[Item] = field(default_factory=list)
    policy: str = "raw"
    pending: str = ""  # the LLM's failure; the items are the raw turn, to extract again later


def chosen(cfg, space: str | None, capture: str | None = None, infer=None) -> str:
    """The policy of one call: `capture` as given, else mem0's infer (True: llm with an LLM configured, else
    triggers; False: raw), else the space's setting, else the global one."""
    if capture is not None:
        if capture not in POLICIES:
            raise InputError(f"capture must be one of {', '.join(POLICIES)}, e.g. \"triggers\"")
        if capture == "llm" and not cfg.llm:
            raise InputError("capture llm needs an LLM: set provider and model in config.toml's [llm], "
                             "or use capture triggers")
        return capture
    if infer is not None:
        if not isinstance(infer, bool):
            raise InputError("infer must be true or false")
        return ("llm" if cfg.llm else "triggers") if infer else "raw"
    return dict(cfg.capture_spaces).get(space or "", cfg.capture_policy)


def capture(cfg, turns: list[tuple[str, str, str]], policy: str) -> Captured:
    """The items policy makes of turns ((role, speaker, text) each, the last of a conversation)."""
    raw = [Item(text, RAW_TYPE, None, speaker) for _role, speaker, text in turns]
    if policy == "triggers":
        return Captured([i for role, speaker, text in turns for i in triggers.extract(text, speaker, role)],
                        "triggers")
    if policy == "llm":
        try:
            return Captured(llm_extract.extract(cfg, turns), "llm")
        except ProviderError as exc:
            return Captured(raw, "raw", pending=str(exc))
    return Captured(raw, "raw")


def mark_pending(home: Path, space: str | None, ids: list[str], reason: str) -> None:
    """Note raw-stored turns the LLM could not read, for a later extraction pass (one JSON line each)."""
    line = json.dumps({"space": space, "ids": [i for i in ids if i], "reason": reason,
                       "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}, ensure_ascii=False)
    path = Path(home) / PENDING_FILE
    with _LOCK, os.fdopen(open_private(path), "a", encoding="utf-8") as f:
        # a crash mid-append left a line without its end: this one starts a line of its own, not glued to it
        f.write(("\n" if _torn(path) else "") + line + "\n")
        f.flush()
        os.fsync(f.fileno())


def pending(home: Path) -> list[dict]:
    """The turns waiting for an extraction pass, oldest first."""
    with _LOCK:
        return [_entry(line) for line in _lines(Path(home) / PENDING_FILE)]


def _entry(line: str) -> dict:
    """One pending entry; a line a crash tore is an entry with no turns (the pass drops it; the turns it named
    stay stored raw), so one torn line never stops every later pass and the count the rewrite drops stays right."""
    try:
        entry = json.loads(line)
    except ValueError:
        entry = None
    return entry if isinstance(entry, dict) else {"space": None, "ids": [], "reason": "an unreadable line"}


def _torn(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            if f.seek(0, os.SEEK_END) == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except FileNotFoundError:
        return False


def rewrite_pending(home: Path, done: int, kept: list[dict]) -> None:
    """The list without the first `done` entries (those a pass read), with `kept` first and every entry appended
    since the pass read it after them; swapped in whole, under the lock every append takes."""
    path = Path(home) / PENDING_FILE
    with _LOCK:  # its folder synced too: after a crash the list is this one, not the replaced one (extracted twice)
        replace_whole(path, lambda cur: "".join([*(json.dumps(e, ensure_ascii=False) + "\n" for e in kept),
                                                 *(ln + "\n" for ln in _split(cur)[done:])]).encode("utf-8"))


def _lines(path: Path) -> list[str]:
    try:
        return _split(path.read_bytes())
    except FileNotFoundError:
        return []


def _split(data: bytes | None) -> list[str]:
    return [ln for ln in (data or b"").decode("utf-8", "replace").splitlines() if ln.strip()]  # a torn character too
