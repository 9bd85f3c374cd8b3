"""Command-line commands for maintenance and verification."""

from __future__ import annotations

import sys

import click

from indexer.cli import output
from indexer.cli.backend import backend
from indexer.cli.common import SCOPE, CliContext, pass_ctx, warn


@click.command()
@SCOPE
@click.option("--repair", is_flag=True, help="Re-index only what differs, then check again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/JSON.md).")
@pass_ctx
def verify(c: CliContext, scope, repair, as_json):
    """Check every chunk, vector and full-text row against the notes; exit 1 on a difference."""
    reports = backend(c).verify(scope=scope, repair=repair)
    if as_json:
        output.emit({"ok": all(rep.ok for rep in reports), "stores": output.by_store([r.to_dict() for r in reports])})
    for rep in [] if as_json else reports:
        for line in rep.skipped:
            warn(f"skipped {line}")
        for step in rep.repaired:
            click.echo(f"{rep.store}: repair: {step}")
        for d in rep.differences:
            click.echo(d.line(rep.store))
        state = "consistent" if rep.ok else f"{len(rep.differences)} difference(s); run `mdmem verify --repair`"
        skipped = f", {len(rep.skipped)} skipped" if rep.skipped else ""
        click.echo(f"{rep.store}: {rep.files} notes, {rep.chunks} chunks{skipped}, {state}")
    if not all(rep.ok for rep in reports):
        sys.exit(1)
