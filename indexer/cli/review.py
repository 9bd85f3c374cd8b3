"""`mdmem review`: the decisions `add` made on its own and the ones waiting for a person; `mdmem consolidate`."""

from __future__ import annotations

import click

from indexer.cli.backend import backend
from indexer.cli.common import CliContext, pass_ctx
from indexer.cli.memories import AS_JSON
from indexer.cli.output import emit


@click.command()
@click.argument("action", type=click.Choice(["list", "accept", "reject", "edit", "undo"]), default="list")
@click.argument("decision_id", metavar="[ID]", required=False)
@click.argument("text", required=False)
@click.option("--all", "everything", is_flag=True, help="List the whole decision log, not only what waits.")
@click.option("--space", help="Only this memory space's decisions, e.g. alice; default: every space's.")
@AS_JSON
@pass_ctx
def review(c: CliContext, action, decision_id, text, everything, space, as_json):
    """List what waits for review, or ACTION one decision: accept (keep it), reject (undo it), undo (any logged
    decision), edit ID TEXT (the memory, or a proposed summary, rewritten)."""
    if action == "list":
        res = backend(c).review("list", space=space, all=everything)
    else:
        res = backend(c).review(action, id=decision_id, text=text, space=space)
    if as_json:
        emit(res)
        return
    if action != "list":
        click.echo(f"{res['status']} {res['id']} ({res['action']})")
        return
    if not res["entries"]:
        click.echo("nothing waits for review" if not everything else "no decisions logged yet", err=True)
    for e in res["entries"]:
        click.echo(f"{e['id']}  {e['status']:<8} {e['action']:<10} {(e.get('at') or '')[:16]}  {e['reason']}")


@click.command()
@click.option("--now", help="The day ages count from: 2026-11-25; default: today.")
@AS_JSON
@pass_ctx
def consolidate(c: CliContext, now, as_json):
    """Propose a summary of each week of journal memories older than consolidate_after_days; the proposals wait
    in `mdmem review` (accept writes the summary note; the journals stay as they are)."""
    res = backend(c).consolidate(now=now)
    if as_json:
        emit(res)
        return
    click.echo(f"{res['proposed']} proposals; see mdmem review")
