"""`mdmem recent`: the newest memories by their own date (registered by cli/main.py)."""

from __future__ import annotations

import click

from indexer.cli.backend import backend
from indexer.cli.common import SCOPE, CliContext, pass_ctx
from indexer.cli.memories import AS_JSON, SPACE
from indexer.cli.output import emit


@click.command()
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="How many memories.")
@click.option("--since", help="Only memories dated on or after this day: 2026-03-01, 7d, 2w, 3m.")
@click.option("--until", help="Only memories dated on or before this day: 2026-03-31, 7d, 2w, 3m.")
@click.option("--now", help="The day ages such as 7d count from: 2026-11-25; default: today.")
@SCOPE
@SPACE
@AS_JSON
@pass_ctx
def recent(c: CliContext, limit, since, until, now, scope, space, as_json):
    """List the newest memories, newest first, each with its date and source lines; --since and --until
    (both inclusive) list a day or a range of days."""
    found = backend(c).recent(limit=limit, scope=scope, space=space, since=since, until=until, now=now)
    if as_json:
        emit({"results": found})
        return
    if not found:
        click.echo("no memories yet; add one with mdmem add \"...\"", err=True)
    for m in found:
        when = (m.get("date") or "").replace("T", " ")
        click.echo(f"{when:<16}  [{m['store']}] {m['uri']}:{m['start_line']}  {' '.join(m['text'].split())}")
