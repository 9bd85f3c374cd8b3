"""Memory spaces: one folder per user or character inside a store, so memories never cross between them."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from indexer.errors import InputError

FOLDER = "spaces"  # a space NAME lives in <root>/spaces/NAME/ and mirrors the usual layout (user/, journal/, …)
MAX_NAME = 64
_BAD = re.compile(r"[/\\\x00-\x1f\x7f]")


def space_name(name: str | None) -> str | None:
    """The checked space name (None: the default space, every note outside spaces/), or InputError."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise InputError("space must be a name such as alice or Seraphina")
    name = unicodedata.normalize("NFC", name.strip())
    if not name:
        return None
    if len(name) > MAX_NAME or _BAD.search(name) or name.startswith(".") or name in ("..",):
        raise InputError(f"space {name[:80]!r} is not a usable name; use up to {MAX_NAME} characters without "
                         "slashes or a leading dot, e.g. alice")
    return name


def space_prefix(name: str | None) -> str | None:
    """The uri prefix of a space's notes (`spaces/alice/`), None for the default space."""
    name = space_name(name)
    return None if name is None else f"{FOLDER}/{name}/"


def in_space(uri: str, name: str | None) -> bool:
    """Whether a note belongs to the space (the default space holds every note outside spaces/)."""
    prefix = space_prefix(name)
    if prefix is None:
        return not uri.startswith(f"{FOLDER}/")
    return uri.startswith(prefix)


def space_uri(name: str | None, uri: str) -> str:
    """The store uri of a note given relative to its space."""
    prefix = space_prefix(name)
    return uri if prefix is None else prefix + uri.lstrip("/")


def space_of(uri: str) -> str | None:
    """The space a stored note belongs to, None for the default space."""
    if not uri.startswith(f"{FOLDER}/"):
        return None
    parts = uri.split("/", 2)
    return parts[1] if len(parts) == 3 else None


def as_stored(name: str | None, roots) -> str | None:
    """The checked name spelled as the space already on disk when it differs only by case (Alice is alice):
    a space is one folder whichever way a caller writes its name. A new space keeps the caller's spelling."""
    name = space_name(name)
    if not name:
        return name
    key, found = name.casefold(), []
    for root in roots:
        try:
            found += [e for e in os.listdir(Path(root) / FOLDER) if e.casefold() == key]
        except OSError:
            continue
    return name if not found or name in found else sorted(found)[0]
