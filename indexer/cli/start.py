"""`mdmem init`: create the stores a user names on purpose, and say what to do next."""

from __future__ import annotations

from pathlib import Path

import click

from indexer.cli.common import CliContext, pass_ctx


@click.command()
@click.option("--project", "project", type=click.Path(path_type=Path), default=None,
              help="Also create this project's .mdmem store (same as mdmem --project DIR init).")
@click.option("--home", "home", type=click.Path(path_type=Path), default=None,
              help="The global store to create (same as mdmem --home DIR init).")
@pass_ctx
def init(c: CliContext, project: Path | None, home: Path | None):
    """Create the global store (--home) and, with --project, the project's .mdmem store."""
    for name, given, before in (("--project", project, c.project), ("--home", home, c.home)):
        if given is not None and before is not None and Path(given).resolve() != Path(before).resolve():
            raise click.UsageError(f"{name} is given twice with different folders; name it once")
    c.project = project if project is not None else c.project
    c.home = home if home is not None else c.home
    c.create = True
    cfg = c.config()  # creates the missing roots; the index is made by the first command that needs it
    click.echo(f"global store: {cfg.home}")
    if cfg.project is not None:
        click.echo(f"project store: {cfg.project}")
    click.echo(f"next: write notes (*.md) under {cfg.project or cfg.home}, or "
               f"mdmem add \"I prefer my coffee black\" --type preference; then mdmem search \"coffee\"")
