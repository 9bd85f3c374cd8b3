"""Where stores may be created: an explicit root must exist (or be asked for), the default home is made once."""

from __future__ import annotations

import os
from pathlib import Path

from indexer.config import Config
from indexer.errors import ConfigError
from indexer.private_files import make_private_dirs


class MissingStoreError(ConfigError):
    """A store root named on purpose does not exist; nothing is created for a typo."""


def check_roots(cfg: Config, explicit_home: bool, explicit_project: bool, create: bool = False,
                notice=None, served=None) -> list[Path]:
    """Make sure each store root of cfg exists before anything opens it; returns the roots created.

    An explicit root (flag or MDMEM_* variable) that is missing is an error naming the fix, unless create
    is set or a running daemon serves these stores (`served(cfg)`: it answers for a root deleted under
    it, with no hits, until the folder is back); the default home is created on first use with a notice.
    """
    made = []
    wanted = [("home", cfg.home, explicit_home)]
    if cfg.project is not None and explicit_project:
        wanted.append(("project", cfg.project, True))
    for kind, root, explicit in wanted:
        if root.is_dir():
            continue
        if root.exists():
            raise MissingStoreError(f"{root} is a file, not a folder; give the {kind} store a folder")
        if explicit and not create:
            if served is not None and served(cfg):
                continue
            raise missing_store(kind, root)
        make_private_dirs(root)
        made.append(root)
        if not explicit and notice is not None:
            notice(f"created the global store {_short(root)} (first run); notes you add live there")
    return made


def check_named_for_client(flag, create: bool, env=None) -> None:
    """A server a client starts (`mdmem mcp`) serves a store named on purpose, or the one that exists already.

    MCP clients start the server with a few environment variables (HOME, PATH, ...): an MDMEM_HOME exported in
    the user's shell never arrives, and a fresh ~/.mdmem answered every search with nothing.
    """
    if create or explicit(flag, "MDMEM_HOME", env) or Path("~/.mdmem").expanduser().is_dir():
        return
    raise MissingStoreError("no store named and no ~/.mdmem: name the store in the MCP client's config, "
                            '"args": ["--home", "/path/to/store", "mcp"] or "env": {"MDMEM_HOME": "/path/to/store"} '
                            "(clients pass only a few environment variables, so an exported MDMEM_HOME never arrives)")


def explicit(flag, env_name: str, env=None) -> bool:
    """A root counts as explicit when a flag or an MDMEM_* variable named it."""
    env = os.environ if env is None else env
    return flag is not None or bool(env.get(env_name))


def missing_store(kind: str, root: Path) -> MissingStoreError:
    """The refusal of a store named on purpose that does not exist, with a command that creates it."""
    if kind == "home":
        return MissingStoreError(f"no store at {root}; check the path, or create it with `mdmem --home {root} init` "
                                 f"(or add --create)")
    project = root.parent if root.name == ".mdmem" else root
    return MissingStoreError(f"no project store at {root}; check the path, or create it with "
                             f"`mdmem --project {project} init` (or add --create)")


def _short(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)
