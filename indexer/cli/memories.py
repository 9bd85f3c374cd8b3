"""Command-line commands that read back and change single memories: `get`, `update`, `forget`."""

from __future__ import annotations

import sys

import click

from indexer.cli import output
from indexer.cli.common import SCOPE, CliContext, pass_ctx, warn
from indexer.cli.backend import backend
from indexer.errors import InputError

SPACE = click.option("--space", help="Memory space (a user or character), e.g. alice; default: notes outside spaces/.")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
EXPECT = click.option("--expect-hash", "expected_hash",
                      help="Refuse unless the memory still has this hash (as get printed it).")


def _echo_json(data: dict) -> None:
    output.emit(data)


def _where(res: dict) -> str:
    space = f" (space {res['space']})" if res.get("space") else ""
    return f"[{res['store']}] {res['uri']}:{res['start_line']}-{res['end_line']}{space}"


@click.command()
@click.argument("ref")
@SPACE
@SCOPE
@AS_JSON
@pass_ctx
def get(c: CliContext, ref, space, scope, as_json):
    """Print a memory by ID, or a note's lines by URI[:START[-END]], as the Markdown holds them now."""
    res = backend(c).get(ref, space=space, scope=scope)
    if as_json:
        _echo_json(res)
        return
    facts = [f"id {res['id']}"] if "id" in res else [f"{len(res['records'])} indexed memories here"]
    if res.get("date"):
        facts.append(f"date {res['date']}")
    if "access_count" in res:
        facts.append(f"read {res['access_count']}x, reinforced {res['reinforcement']:g}x")
    facts.append(f"hash {res['hash'][:12]}")
    click.echo(f"{_where(res)}  " + ", ".join(facts), err=True)
    if res.get("in_step") is False:
        warn("the note changed since it was indexed; the text below is the note's, the id may be out of date")
    click.echo(res["text"])


@click.command()
@click.argument("record_id", metavar="ID")
@click.argument("text")
@SPACE
@EXPECT
@click.option("--redact", is_flag=True, help="Mask secrets instead of refusing the text.")
@AS_JSON
@pass_ctx
def update(c: CliContext, record_id, text, space, expected_hash, redact, as_json):
    """Replace memory ID's text with TEXT (or - for stdin) in its note; its date and counters stay."""
    if text == "-":
        text = sys.stdin.read()
    res = backend(c).update(record_id, text, space=space, expected_hash=expected_hash, redact=redact)
    if as_json:
        _echo_json(res)
        return
    if res["redacted"]:
        warn(f"redacted: {', '.join(res['redacted'])}")
    click.echo(f"updated {_where(res)}" + (f", now id {res['id']}" if res.get("id") else ""))


@click.command()
@click.argument("record_id", metavar="[ID]", required=False)
@click.option("--match", "query", help="Forget what this query finds (lists it; add --yes to remove).")
@click.option("--yes", is_flag=True, help="With --match: remove what it lists.")
@click.option("--limit", "-n", type=int, help="With --match: most memories considered (default 10).")
@SPACE
@EXPECT
@AS_JSON
@pass_ctx
def forget(c: CliContext, record_id, query, yes, limit, space, expected_hash, as_json):
    """Remove memory ID from its note (headings and other lines stay), or what --match QUERY finds."""
    if bool(record_id) == bool(query):
        raise InputError("give a memory ID or --match QUERY, e.g. mdmem forget --match \"old phone number\"")
    mem = backend(c)
    if record_id:
        res = mem.forget(record_id, space=space, expected_hash=expected_hash)
        if as_json:
            _echo_json(res)
        else:
            click.echo(f"forgot {_where(res)}: {' '.join(res['text'].split())[:120]}")
        return
    res = mem.forget_matching(query, space=space, yes=yes, limit=limit)
    if as_json:
        _echo_json(res)
        return
    for s in res.get("skipped", []):
        warn(f"left {s['id']} ({s['uri']}) alone: {s['reason']}")
    if not res["memories"]:
        click.echo("nothing matches" if not res.get("skipped") else "nothing to forget", err=True)
        return
    verb = "forgot" if res["action"] == "forgotten" else "would forget"
    for m in res["memories"]:
        click.echo(f"{verb} {m['id']} {_where(m)}: {' '.join(m['text'].split())[:120]}")
    if res["action"] != "forgotten":
        click.echo(f"{res['count']} memories listed; run again with --yes to forget them", err=True)


@click.command()
@click.argument("record_id", metavar="ID")
@SPACE
@SCOPE
@AS_JSON
@pass_ctx
def history(c: CliContext, record_id, space, scope, as_json):
    """Print a memory's versions, oldest first: the lines it superseded, itself, what superseded it."""
    res = backend(c).history(record_id, space=space, scope=scope)
    if as_json:
        _echo_json(res)
        return
    for v in res["versions"]:
        state = "current" if v["current"] else f"superseded on {v['superseded_on']} by {v['superseded_by']}"
        click.echo(f"{v['date'] or '-'}  {v['uri']}:{v['start_line']}  {state}  ids {', '.join(v['ids'])}")
        click.echo(f"    {v['text']}")
