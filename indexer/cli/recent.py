"""`mdmem recent`: the newest memories by their own date (registered by cli/main.py)."""

from __future__ import annotations

import json

import click

from indexer.cli.common import CliContext, pass_ctx
from indexer.cli.daemon import backend


@click.command()
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="How many memories.")
@click.option("--scope", type=click.Choice(["all", "global", "project"]), default="all", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def recent(c: CliContext, limit, scope, as_json):
    """List the newest memories, newest first, each with its date and source lines."""
    hits = backend(c).recent(limit=limit, scope=scope)
    if as_json:
        click.echo(json.dumps([h.to_dict() for h in hits], ensure_ascii=False))
        return
    if not hits:
        click.echo("no memories yet; add one with mdmem add \"...\"", err=True)
    for h in hits:
        when = (h.date or "").replace("T", " ")
        text = " ".join(h.content.split())
        click.echo(f"{when:<16}  [{h.store}] {h.uri}:{h.start_line}  {text}")


COMMANDS: list = [recent]
