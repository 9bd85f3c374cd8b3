"""The note a store already keeps for a memory type: `add` appends there instead of starting a twin."""

from __future__ import annotations

from pathlib import Path

from indexer.notes.frontmatter import split_front_matter
from indexer.notes.scanner import NoteFilter

HEAD_BYTES = 4096  # front matter sits at the top; a huge note is not read whole to learn its type


def note_of_type(root: Path, folder: str, type_: str) -> str | None:
    """The uri of the one note directly in root/folder that is of type_, else None.

    A note is of a type when its front matter says so, or, without a `type`, when its name is the
    type or its plural (`preference.md`, `preferences.md`). The default name wins over the others;
    two or more other candidates are ambiguous and none is chosen.
    """
    base = Path(root) / folder
    if not base.is_dir():
        return None
    default = f"{folder}/{type_}.md"
    found = []
    keep = NoteFilter(Path(root))
    for path in sorted(base.glob("*.md")):
        uri = keep.uri_of(path)
        if uri is None or not path.is_file() or path.is_symlink():
            continue
        declared = _declared_type(path)
        named = path.stem.casefold() in (type_, type_ + "s")
        if declared == type_ or (declared is None and named):
            if uri == default:
                return uri
            found.append(uri)
    return found[0] if len(found) == 1 else None


def _declared_type(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    return split_front_matter(head)[0].type
