"""The backend of a command that asks the memory: the running daemon where one serves the stores, else this process.

Which commands ask the memory is said once, by the commands themselves: each that does calls `backend`,
and every operation of `protocol.MemoryAPI` is the daemon's when one runs (its warm model, its one writer
per store). `serve`, `init`, `token` and `doctor` never call it.
"""

from __future__ import annotations

import click

from indexer.cli.common import CliContext


def backend(c: CliContext):
    """The `MemoryAPI` that serves the current command."""
    from indexer.remote import remote_memory
    remote = remote_memory(c.config(), flags=daemon_flags(c))
    if remote is not None:
        click.get_current_context().call_on_close(remote.close)
        return remote
    return c.memory()


def daemon_flags(c: CliContext) -> dict:
    """The flags a daemon must honour: one that changes how the stores are read must be its too, or it is refused."""
    return {k: v for k, v in c.settings.items() if k in ("embedder", "embedder_model", "embedder_base_url") and v}
