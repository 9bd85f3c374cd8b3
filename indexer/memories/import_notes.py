"""`import`: read every file first, then add only what each note lacks (atomically, note by note) and index it."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from indexer.config import Config
from indexer.errors import InputError, MdmemError
from indexer.notes.append import Target, append_entry, safe_uri
from indexer.notes.imports_formats import import_files, parse_file
from indexer.notes.imports_model import ImportedNote, ImportFormatError, note_header, render_entry
from indexer.notes.privacy import screen
from indexer.notes.spaces import space_uri


@dataclass
class ImportReport:
    files: int = 0
    formats: dict = field(default_factory=dict)  # format -> files read in it
    notes: int = 0  # notes the import touches (or would, in a dry run)
    added: int = 0  # memories written (or that would be)
    present: int = 0  # memories already in their note: a second run adds none
    redacted: int = 0  # memories whose secrets were masked before writing
    skipped: list = field(default_factory=list)  # files in a folder that are in no known format
    bad: list = field(default_factory=list)  # with skip_bad: damaged files left out, as "path:line: reason"
    hidden: int = 0  # hidden and system chat messages left out
    written: list = field(default_factory=list)  # store uris of the notes written
    indexed: bool = False
    dry_run: bool = False
    seconds: float = 0.0
    # each memory written (or that would be), in order, the first SHOWN of them: {"uri", "space", "date", "speaker",
    # "text"} as its note gets it (secrets masked); the count of the rest, and a digest of every one of them
    memories: list = field(default_factory=list)
    memories_more: int = 0
    digest: str = ""


SHOWN = 100  # a chat import adds thousands: a preview lists the first ones, counts the rest


@dataclass(frozen=True)
class _Plan:
    target: Target
    header: str
    text: str  # what is appended: the missing entries, in source order
    count: int
    shown: tuple = ()  # each missing entry as a report lists it

def import_path(path, cfg: Config, *, fmt: str | None = None, space: str | None = None, scope: str = "global",
                dry_run: bool = False, skip_bad: bool = False, index_notes=None, progress=None,
                warn=None) -> ImportReport:
    """Import a file or folder into the store of `scope`; nothing is written unless every file parses
    (with skip_bad: unless every file that parses does, the others listed in the report).

    index_notes(store, paths) makes the written notes searchable (the store's writer, in a daemon).
    """
    t0 = time.perf_counter()
    warn = warn or (lambda message: None)
    root = _root(cfg, scope)
    files = import_files(Path(path))
    report = ImportReport(files=len(files), dry_run=dry_run)
    notes: list[ImportedNote] = []
    for f in files:  # parse everything before writing anything: a bad file leaves no note half-imported
        try:
            found, parsed, hidden = parse_file(f, fmt, space, strict=fmt is not None or len(files) == 1,
                                               zone=cfg.timezone)
        except ImportFormatError as exc:
            if len(files) == 1:
                raise
            if not skip_bad:
                raise InputError(f"{exc}; nothing was imported (pass --skip-bad to import the other files)") from None
            report.bad.append(str(exc))
            warn(f"{exc}; skipped")
            continue
        report.hidden += hidden
        if found is None:
            report.skipped.append(str(f))
            continue
        report.formats[found] = report.formats.get(found, 0) + 1
        notes += parsed
    _tell_skipped(report.skipped, warn)
    plans = [p for p in (_plan(root, scope, note, report) for note in _merged(notes)) if p is not None]
    report.notes = len(plans)
    digest = hashlib.sha256()
    for plan in plans:  # the same plans a dry run and the import that follows it make: the digest tells them apart
        digest.update(f"{plan.target.uri}\0{plan.text}\0".encode("utf-8"))
        listed = plan.shown[:max(SHOWN - len(report.memories), 0)]
        report.memories += listed
        report.memories_more += len(plan.shown) - len(listed)
    report.digest = digest.hexdigest()
    for done, plan in enumerate(plans, 1):
        if not dry_run:
            append_entry(plan.target, plan.text, plan.header)  # temp file, fsync, atomic swap, under the note lock
            report.written.append(plan.target.uri)
        report.added += plan.count
        if progress:
            progress(done, len(plans))
    if report.written and index_notes is not None:
        report.indexed = _index(index_notes, scope, [root / uri for uri in report.written], warn)
    report.seconds = time.perf_counter() - t0
    return report


SKIPPED_NAMED = 5  # a SillyTavern data folder skips ~200 files (presets, themes, sprites): name a few


def _tell_skipped(skipped: list[str], warn) -> None:
    """One warning per file of another kind, or, past a few, one for them all (avatars and sprites unnamed)."""
    named = [f for f in skipped if not f.lower().endswith(".png")]
    for f in named[:SKIPPED_NAMED]:
        warn(f"{f}: not a SillyTavern chat, lorebook, card or mem0 export; skipped")
    if len(skipped) > len(named[:SKIPPED_NAMED]):
        warn(f"{len(skipped) - len(named[:SKIPPED_NAMED])} more files of other kinds (settings, presets, images) "
             "skipped; `--json` lists them under skipped")


def _root(cfg: Config, scope: str) -> Path:
    if scope == "global":
        return Path(cfg.home)
    if scope == "project":
        if cfg.project is None:
            raise InputError("no project store here; run inside a folder with .mdmem/ or pass --project DIR")
        return Path(cfg.project)
    raise InputError(f"unknown scope {scope!r}; imports go to global or project")


def _merged(notes: list[ImportedNote]) -> list[ImportedNote]:
    """One note per (space, uri): chats of the same day, or memories of one user from several files, together."""
    out: dict[tuple, ImportedNote] = {}
    for note in notes:
        key = (note.space, note.uri)
        have = out.get(key)
        out[key] = note if have is None else replace(
            have, entries=have.entries + note.entries, tags=tuple(dict.fromkeys(have.tags + note.tags))[:50])
    return list(out.values())


def _plan(root: Path, scope: str, note: ImportedNote, report: ImportReport) -> _Plan | None:
    """What the note lacks, rendered; None when it already holds every entry."""
    uri = space_uri(note.space, note.uri)
    try:
        uri = safe_uri(root, uri)
    except InputError as exc:
        raise InputError(f"cannot import into {uri}: {exc}") from None
    target = Target(store=scope, root=root, uri=uri, path=root / uri, title=note.title)
    try:
        have = target.path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    except FileNotFoundError:
        have = ""
    have = f"\n{have}\n"  # whole lines only: "- 14:03: hi" is not present in "- 14:03: hi there"
    blocks, seen, shown = [], set(), []
    for entry in note.entries:
        text, masked = screen(entry.text, True)  # secrets in old chats are masked, never written
        block = render_entry(replace(entry, text=text), note.kind)
        key = block.strip()
        if key in seen or f"\n{key}\n" in have:
            report.present += 1
            continue
        seen.add(key)
        report.redacted += bool(masked)
        blocks.append(block)
        shown.append({"uri": uri, "space": note.space, "date": entry.when.isoformat(" ", "minutes") if entry.when
                      else None, "speaker": entry.speaker or entry.heading, "text": text.strip()})
    if not blocks:
        return None
    joiner = "\n" if note.kind == "section" else ""  # a blank line between sections, none between list items
    return _Plan(target=target, header=note_header(note), text=joiner.join(blocks), count=len(blocks),
                 shown=tuple(shown))


def _index(index_notes, scope: str, paths: list[Path], warn) -> bool:
    """Make the imported memories searchable now; the notes are written either way (the daemon catches up)."""
    try:
        index_notes(scope, paths)
        return True
    except MdmemError as exc:
        warn(f"imported notes written but not indexed yet ({exc}); run `mdmem index`")
        return False
