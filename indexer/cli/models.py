"""`mdmem models` and `mdmem usage`: which models serve each role, whether they answer, and what they cost."""

from __future__ import annotations

import sys
import time

import click

from indexer.cli import output
from indexer.cli.common import CliContext, pass_ctx
from indexer.retrieval import timespan


@click.group(invoke_without_command=True)
@click.option("--no-probe", is_flag=True, help="Do not call the embedder (no model load, no request).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/JSON.md).")
@pass_ctx
@click.pass_context
def models(ctx, c: CliContext, no_probe, as_json):
    """What is configured per role, whether it answers, and what each store's vectors were made with."""
    if ctx.invoked_subcommand:
        return
    from indexer.sync.model_report import models as report
    data = report(c.config(), probe=not no_probe)
    if as_json:
        output.emit(data)
    else:
        for role, r in data["roles"].items():
            where = f" at {r['base_url']}" if r.get("base_url") else ""
            line = f"{role}: {r['provider']}" + (f" {r['model']}" if r.get("model") else "") + where
            if r.get("answers") is True:
                line += f" — answers ({r['model_id']}, {r['ms']:.0f} ms)"
            elif r.get("answers") is False:
                line += f" — does not answer: {r['error']}"
            click.echo(line)
        for name, s in data["stores"].items():
            made = f"{s['embedder']}, {s['dimensions']} dimensions, {s['vectors']} vectors" if s["embedder"] \
                else s.get("error") or "not indexed yet"
            click.echo(f"{name} store: {made}")
    emb = data["roles"]["embedder"]
    if emb["answers"] is False:
        sys.exit(1)


@models.command("pull")
@click.argument("name")
@pass_ctx
def models_pull(c: CliContext, name):
    """Fetch a sentence-transformers model by its Hugging Face name into the cache (a folder is only checked);
    then use it with `--embedder sentence-transformers --st-model NAME`."""
    from indexer import validation
    from indexer.embedder import pull_model
    name = validation.model_name(name)
    model_id = pull_model(name, c.config().device)
    click.echo(f"{name}: ready ({model_id}); use it with `mdmem --embedder sentence-transformers --st-model "
               f"{name} rebuild`")


@click.command()
@click.option("--since", help="Only calls within this window: 7d, 2w, 3m (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/JSON.md).")
@pass_ctx
def usage(c: CliContext, since, as_json):
    """Calls, texts, tokens, time and estimated cost per provider model (estimates: docs/CONFIGURATION.md, Models)."""
    from indexer.sync.model_report import usage_totals
    day = timespan.parse_day(since, "--since")
    start = time.mktime(day.timetuple()) if day else 0.0
    data = usage_totals(c.config(), start)
    if as_json:
        output.emit(data)
        return
    if not data["models"]:
        click.echo("no provider calls recorded (the bundled models cost nothing and are not logged)")
    for r in data["models"]:
        cost = "unknown price" if r["estimated_cost_usd"] is None else f"~${r['estimated_cost_usd']:.4f}"
        failed = f" ({r['failed']} failed)" if r["failed"] else ""
        click.echo(f"{r['provider']} {r['model']} {r['role']}: {r['calls']} calls{failed}, {r['texts']} texts, "
                   f"{r['tokens']} tokens, {r['seconds']:.1f} s, {cost}")
    if data["models"]:
        click.echo(f"total estimated cost ~${data['estimated_cost_usd']:.4f} (estimates from list prices)")
