"""`mdmem recent`: the newest memories by their own date (registered by cli/main.py)."""

from __future__ import annotations

import click

from indexer.cli.backend import backend
from indexer.cli.common import SCOPE, CliContext, pass_ctx
from indexer.cli.memories import AS_JSON, SPACE
from indexer.cli.output import emit


@click.command()
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="How many memories.")
@SCOPE
@SPACE
@AS_JSON
@pass_ctx
def recent(c: CliContext, limit, scope, space, as_json):
    """List the newest memories, newest first, each with its date and source lines."""
    found = backend(c).recent(limit=limit, scope=scope, space=space)
    if as_json:
        emit({"results": found})
        return
    if not found:
        click.echo("no memories yet; add one with mdmem add \"...\"", err=True)
    for m in found:
        when = (m.get("date") or "").replace("T", " ")
        click.echo(f"{when:<16}  [{m['store']}] {m['uri']}:{m['start_line']}  {' '.join(m['text'].split())}")
