"""Append a memory to a Markdown note: pick the note, keep it inside its root, never lose an edit."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from indexer.config import Config
from indexer import validation
from indexer.errors import ArgumentError, InputError, NoteBusyError, NoteError, for_os_error
from indexer.notes.memory_items import MARKERS
from indexer.notes.merge_saves import merge_saves
from indexer.notes.names import GLOBAL_TYPES, MEMORY_TYPES
from indexer.notes.scanner import NoteFilter
from indexer.notes.spaces import in_space, space_name, space_of, space_uri
from indexer.notes.typed_notes import note_of_type
from indexer.private_files import make_private_dirs, open_private

try:
    import fcntl
except ImportError:  # not on Windows: the compare-and-swap below still guards edits
    fcntl = None

TYPES = MEMORY_TYPES
_TITLES = {"preference": "Preferences", "fact": "Facts", "instruction": "Instructions", "entity": "Entities"}
ATTEMPTS = 50
_FILE_EXAMPLE = "file=agent/notes.md"
SETTLE_ROUNDS = 50  # merges put in, each overtaken by another save, before mdmem stops and says so (at load 4
# an editor saving every 5 ms outran 50 rounds in 3 of ~150 contended appends, and 200 as often: more only waits)
VERIFY_DELAY_S = 0.01  # an editor's rename racing ours lands within microseconds; look again after it


@dataclass(frozen=True)
class Target:
    store: str  # "global" or "project"
    root: Path
    uri: str
    path: Path
    title: str


def choose_target(cfg: Config, type_: str, scope: str | None = None, file: str | None = None,
                  now: datetime | None = None, space: str | None = None) -> Target:
    """The store's note of the type for lasting facts (`user/<type>.md` when it has none), the project's
    journal for events; or --file.

    In a space every path is inside its folder (`spaces/NAME/user/preference.md`), and without
    one no path may lead into a space.
    """
    validation.choice("type", type_, TYPES)
    now = now or datetime.now()
    space = space_name(space)
    if scope is not None:
        validation.choice("scope", scope, ("global", "project"))
    wanted = scope or ("global" if type_ in GLOBAL_TYPES else "project")
    if wanted == "project" and cfg.project is None:
        if scope == "project":
            raise InputError("no project store here; run inside a folder with .mdmem/ or pass --project DIR")
        wanted = "global"  # events without a project go to the global journal
    root = cfg.home if wanted == "global" else cfg.project
    if file:
        uri = safe_uri(root, space_uri(space, str(file).strip().lstrip("/")) if space else file)
        title = PurePosixPath(uri).stem.replace("-", " ").replace("_", " ").capitalize()
        if not in_space(uri, space):
            raise ArgumentError("file", f"lies in the space {space_of(uri)!r}; pass that space to write there", file)
    elif type_ in GLOBAL_TYPES:
        folder = space_uri(space, "user")
        uri, title = note_of_type(root, folder, type_) or f"{folder}/{type_}.md", _TITLES[type_]
    else:
        day = now.strftime("%Y-%m-%d")
        uri, title = space_uri(space, f"journal/{day}.md"), f"Journal {day}"
    return Target(store=wanted, root=Path(root), uri=uri, path=Path(root) / uri, title=title)


def safe_uri(root: Path, file: str) -> str:
    """A note path relative to root that cannot leave it: no absolute paths, `..` or escaping symlinks."""
    raw = str(file).strip().replace("\\", "/")
    if not raw:
        raise ArgumentError("file", "is empty; give a note path inside the store", None, _FILE_EXAMPLE)
    if raw.startswith(("/", "~")) or os.path.isabs(raw) or (len(raw) > 1 and raw[1] == ":"):
        raise ArgumentError("file", "is absolute; give a path relative to the store root", file, _FILE_EXAMPLE)
    parts = [p for p in PurePosixPath(raw).parts if p not in ("", ".")]
    if ".." in parts:
        raise ArgumentError("file", "leaves the store root; `..` is not allowed", file, _FILE_EXAMPLE)
    if any(p.startswith(".") for p in parts):
        raise ArgumentError("file", "is hidden (dot name) and would never be indexed; choose another name", file)
    if any(len(p.encode()) > 250 for p in parts):  # file systems stop at 255 bytes a name, with room for .md
        raise ArgumentError("file", "has a name longer than 250 bytes; choose a shorter one", None, _FILE_EXAMPLE)
    uri = "/".join(parts)
    if not uri.endswith(".md"):
        if PurePosixPath(uri).suffix:
            raise ArgumentError("file", "is not a Markdown note; use a .md name", file, _FILE_EXAMPLE)
        uri += ".md"
    path = Path(root) / uri
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root or path.is_symlink():
        raise ArgumentError("file", "is a symlink or goes through one; give the real note's path inside the store", file)
    if NoteFilter(Path(root)).uri_of(path) is None:
        raise ArgumentError("file", "is excluded from indexing (temp name or .mdmemignore); choose another name", file)
    return uri


def format_entry(text: str, type_: str, journal: bool, now: datetime | None = None, newline: str = "\n",
                 importance: int | None = None, mark_type: bool = False) -> str:
    """One list item: `- 2025-01-05: text` (journal: `- 14:03: text`); later lines indented into the item.
    Its own importance, and its type where the note is shared by several, end its first line as markers."""
    now = now or datetime.now()
    stamp = now.strftime("%H:%M") if journal else now.strftime("%Y-%m-%d")
    label = f"**{DECISION_LABEL}:** " if type_ == "decision" else ""
    marks = (f" <!-- type: {type_} -->" if mark_type else "") + (f" <!-- importance: {importance} -->"
                                                                   if importance else "")
    lines = text.strip().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    body = [f"- {stamp}: {label}{lines[0].strip()}{marks}"] + [("  " + ln.rstrip()) if ln.strip() else ""
                                                              for ln in lines[1:]]
    return newline.join(body) + newline


DECISION_LABEL = "Decision"
# list marker, then an optional `2025-01-05:` / `14:03:` stamp and a `**Decision:**` or speaker label
# (`**Flux the Cat:**`: chat imports write the speaker's name as SillyTavern shows it)
_ITEM_PREFIX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?:(?:\d{4}-\d{2}-\d{2})?\s?(?:\d{1,2}:\d{2})?:\s+)?"
                          r"(?:\*\*(?P<speaker>[^*\n]{1,64}?):\*\*\s*)?")


def strip_item(line: str, keep_speaker: bool = False) -> str:
    """The memory in a line written by format_entry (or any list item), without marker, stamp or item
    markers; with keep_speaker, who said it stays in front as `Mira: …`."""
    line = line.strip()
    m = _ITEM_PREFIX.match(line)
    if m is None:
        return MARKERS.sub("", line)
    rest = MARKERS.sub("", line[m.end():])
    speaker = m["speaker"] if m["speaker"] != DECISION_LABEL else None  # `add --type decision`'s label, no one's name
    return f"{speaker}: {rest}" if keep_speaker and speaker else rest


def new_note_header(title: str, type_: str) -> str:
    """A new note's front matter names its type; importance is each memory's own (an item marker)."""
    return f"---\ntype: {type_}\n---\n\n# {title}\n\n"


def compose(old: bytes | None, entry: str, header: str) -> bytes:
    """The note with the entry appended; every existing byte kept as it was."""
    if not old:
        return (header + entry).encode("utf-8")
    if old.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise NoteError("the note is UTF-16; convert it to UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`) before adding to it")
    nl = b"\r\n" if b"\r\n" in old else b"\n"
    data = entry.encode("utf-8")
    if nl == b"\r\n":
        data = data.replace(b"\n", b"\r\n")
    sep = b"" if old.endswith(nl) else nl
    last = (old + sep).rstrip().rsplit(nl, 1)[-1].lstrip()
    if not last.startswith((b"- ", b"* ", b"+ ")) and not (old + sep).endswith(nl * 2):
        sep += nl  # a blank line so the item does not run into the previous paragraph
    return old + sep + data


def append_entry(target: Target, entry: str, header: str) -> tuple[int, int]:
    """Append atomically (temp, fsync, swap); returns the 1-based line range the entry holds.

    A full disk, a read-only store or a refused write leaves the note as it was and says so in one line.
    """
    try:
        return _append(target, entry, header)
    except OSError as exc:
        raise for_os_error(exc, target.path) from exc


def _append(target: Target, entry: str, header: str) -> tuple[int, int]:
    _make_folders(target.path.parent)
    with note_lock(target):
        base = expect = read_bytes(target.path)
        copies = _copies(base, entry)  # the same lines already there (the entry's stamp makes it rare)
        for _ in range(ATTEMPTS):
            if _copies(base, entry) > copies:
                # our earlier swap is back: an editor's save hid it for an instant (the look below saw
                # that instant) and then gave it back; appending again would write the memory twice
                return _locate(base, entry)
            done, expect, base = swap_bytes_in(target.path, compose(base, entry, header), expect, base)
            if not done:
                continue  # someone saved meanwhile: rebuild on top of their text
            time.sleep(VERIFY_DELAY_S)
            now = read_bytes(target.path)
            found = _locate(now, entry)
            if found:
                return found
            base = expect = now  # an editor's save replaced ours right after: append again
    raise NoteBusyError(f"{target.uri}: the note kept changing while appending; retry when it is not being edited")


def swap_bytes_in(path: Path, new: bytes, expect: bytes | None, base: bytes | None):
    """Put `new` at path if it still holds `expect`.

    Returns (done, what path holds now, the text to rebuild on). With an atomic exchange the
    displaced text is in hand, so an edit saved between our read and our swap is never lost.
    """
    tmp = _synced_temp(path, new)
    try:
        if expect is None:
            try:
                os.link(tmp, path)  # atomic create-if-absent
            except FileExistsError:
                cur = read_bytes(path)
                return False, cur, cur
            _fsync_dir(path.parent)
            return True, new, new
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        cur = read_bytes(path)
        if cur != expect:
            # saved since our read: rebuild on it without swapping, so no one (an editor that reloads,
            # another tool) ever sees our text without theirs; the exchange below covers the instant left
            return (False, None, None) if cur is None else (False, cur, cur)
        try:
            if _exchange(tmp, path):
                return _settle(path, tmp, new, expect)
        except FileNotFoundError:
            return False, None, None  # the note was deleted meanwhile: create it again
        cur = read_bytes(path)  # no atomic exchange here: compare, then replace
        if cur != expect:
            return False, cur, cur
        os.replace(tmp, path)
        _fsync_dir(path.parent)
        return True, new, new
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def replace_whole(path: Path, make) -> bytes:
    """Put make(what path holds now, or None) at path atomically: temp file fsynced, swapped in, its folder
    synced, so what it held is whole or gone after a crash; a save landing in between is read and made again."""
    for _ in range(ATTEMPTS):
        cur = read_bytes(path)
        new = make(cur)
        if swap_bytes_in(path, new, cur, cur)[0]:
            return new
    raise NoteError(f"{path.name}: it kept changing while being written; try again")


def _settle(path: Path, tmp: Path, placed: bytes, over: bytes):
    """Our text is at path and what it displaced at tmp; if that is not what ours was made from, a save
    landed in between: put the merge of both in, and again for what that displaces.

    Never an older text back: a reader (an editor that reloads) may already have built its next save on
    ours, and putting theirs back would have thrown that away (an editor save lost under load, 1 run in
    12 of the load-and-kill test, 2 in 20 of a stress run of 96 appends racing a saving editor).
    """
    for rounds_left in range(SETTLE_ROUNDS, -1, -1):
        displaced = tmp.read_bytes()
        if displaced == over:
            _fsync_dir(path.parent)
            return True, placed, placed
        if not rounds_left:
            break
        merged = merge_saves(over, placed, displaced)
        try:
            nxt = _synced_temp(path, merged)
        except OSError:  # a full disk: their save goes back in place; ours was never acknowledged
            _exchange(tmp, path)
            if tmp.read_bytes() != placed:  # a newer save landed meanwhile: it stays, theirs waits beside it
                _exchange(tmp, path)
                _aside(path, tmp)
            raise
        with contextlib.suppress(OSError):
            os.chmod(nxt, os.stat(tmp).st_mode & 0o7777)
        try:
            _exchange(nxt, path)
        except FileNotFoundError:
            os.unlink(nxt)
            return False, None, None  # deleted meanwhile: whoever deleted it meant it
        os.unlink(tmp)  # what it held is in the merge, which is in place
        os.rename(nxt, tmp)  # so the caller's cleanup finds what the merge displaced
        over, placed = placed, merged
    kept = _aside(path, tmp)  # its last save, which no merge took in: kept beside the note, never dropped
    raise NoteBusyError(f"{path.name}: another program saved it {SETTLE_ROUNDS} times while mdmem merged; its "
                        f"last save is in {kept.name}; retry when it stops")


def _aside(path: Path, tmp: Path) -> Path:
    kept = path.with_name(f".{path.name}.unmerged-{time.time_ns()}")
    os.rename(tmp, kept)
    return kept


def _synced_temp(path: Path, data: bytes) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half temp file beside the note
        raise
    return tmp


def _copies(data: bytes | None, entry: str) -> int:
    if not data:
        return 0
    needle = entry.encode("utf-8")
    return data.replace(b"\r\n", b"\n").count(needle)


def _locate(data: bytes | None, entry: str) -> tuple[int, int] | None:
    if not data:
        return None
    needle = entry.encode("utf-8")
    if b"\r\n" in data:
        needle = needle.replace(b"\n", b"\r\n")
    at = data.rfind(needle)
    if at < 0:
        return None
    start = data[:at].count(b"\n") + 1
    return start, start + needle.rstrip(b"\r\n").count(b"\n")


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc_renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None) if os.name == "posix" else None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where the system cannot."""
    if _libc_renameat2 is None:
        return False
    rc = _libc_renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _make_folders(folder: Path) -> None:
    """Create the note's missing folders, each recorded in its parent, so an acknowledged memory's path
    survives a crash as its text does."""
    for new in make_private_dirs(folder):
        _fsync_dir(new.parent)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def note_lock(target: Target):
    """One writer per note among mdmem processes (editors do not lock; the swap guards them)."""
    if fcntl is None:
        yield
        return
    folder = target.root / ".locks"
    make_private_dirs(folder)
    name = hashlib.sha256(target.uri.encode()).hexdigest()[:16] + ".lock"
    with os.fdopen(open_private(folder / name, os.O_RDWR), "r+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
