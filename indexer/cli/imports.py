"""`mdmem import`: SillyTavern chats, lorebooks and cards, and mem0 exports, into notes (registered by main.py)."""

from __future__ import annotations

from pathlib import Path

import click

from indexer.cli.backend import backend
from indexer.cli import output
from indexer.cli.common import CliContext, pass_ctx, progress_bar
from indexer.notes.names import IMPORT_FORMATS as FORMATS


@click.command(name="import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default: recognised from each file's content.")
@click.option("--space", help="Put everything in this space (default: the character's, or mem0's user_id/agent_id).")
@click.option("--scope", type=click.Choice(["global", "project"]), default="global", show_default=True,
              help="The store the notes go to.")
@click.option("--dry-run", is_flag=True, help="Say what would be added; write nothing.")
@click.option("--skip-bad", is_flag=True, help="Import a folder's good files and list the damaged ones "
              "(default: a damaged file stops the import before any write).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
def import_(c: CliContext, path, fmt, space, scope, dry_run, skip_bad, as_json):
    """Import a file or folder; a second run adds nothing, a bad file stops the import before any write."""
    # a running daemon reads the files and indexes through its writer, so the path must not depend on our cwd
    rep = backend(c).import_notes(str(path.expanduser().resolve()), format=fmt, space=space, scope=scope,
                                  dry_run=dry_run, skip_bad=skip_bad, progress=progress_bar("importing"))
    if as_json:
        output.emit(rep)
        return
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(rep["formats"].items())) or "nothing importable"
    verb = "would add" if dry_run else "added"
    click.echo(f"{rep['files']} files ({kinds}): {verb} {rep['added']} memories to {rep['notes']} notes, "
               f"{rep['present']} already there" + (f", {rep['redacted']} with secrets masked" if rep['redacted'] else "")
               + (f", {rep['hidden']} hidden or system messages left out" if rep['hidden'] else "")
               + (f", {len(rep['skipped'])} files skipped" if rep['skipped'] else "") + f" in {rep['seconds']:.2f}s")
    for bad in rep["bad"]:
        click.echo(f"not imported (damaged): {bad}", err=True)
