"""`mdmem init`: create the stores a user names on purpose, and say what to do next."""

from __future__ import annotations

import click

from indexer.cli.common import CliContext, pass_ctx


@click.command()
@pass_ctx
def init(c: CliContext):
    """Create the global store (--home) and, with --project, the project's .mdmem store."""
    c.create = True
    cfg = c.config()  # creates the missing roots; the index is made by the first command that needs it
    click.echo(f"global store: {cfg.home}")
    if cfg.project is not None:
        click.echo(f"project store: {cfg.project}")
    click.echo(f"next: write notes (*.md) under {cfg.project or cfg.home}, or "
               f"mdmem add \"I prefer my coffee black\" --type preference; then mdmem search \"coffee\"")


COMMANDS: list = [init]
