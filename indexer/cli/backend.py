"""Which backend answers each command: the running daemon where one serves the stores, else this process."""

from __future__ import annotations

import click

from indexer.cli.common import CliContext

DAEMON = "daemon when running"  # the daemon's warm model and its one writer per store
LOCAL = "in-process"
ROUTES = {
    "index": DAEMON, "rebuild": DAEMON, "search": DAEMON, "stats": DAEMON, "status": DAEMON, "decay": DAEMON,
    "cleanup": DAEMON, "add": DAEMON, "recall": DAEMON, "verify": DAEMON, "mcp": DAEMON,
    "get": DAEMON, "update": DAEMON, "forget": DAEMON, "import": DAEMON, "recent": DAEMON,
    "token": LOCAL,  # reads or creates the token file; no index involved
    "serve": LOCAL,  # it is the daemon
    "doctor": LOCAL,  # checks this installation's extension and model, not the daemon's
    "init": LOCAL,  # creates store folders; opens no index
}


def backend(c: CliContext):
    """The `MemoryAPI` that serves the current command (see ROUTES)."""
    command = click.get_current_context().info_name
    if ROUTES.get(command) == DAEMON:
        from indexer.remote import remote_memory
        # a flag that changes how the stores are read must be the daemon's too, or it is refused
        remote = remote_memory(c.config(), flags={k: v for k, v in c.settings.items() if k == "embedder" and v})
        if remote is not None:
            click.get_current_context().call_on_close(remote.close)
            return remote
    return c.memory()
