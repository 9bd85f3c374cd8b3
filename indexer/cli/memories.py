"""Command-line commands that read back and change single memories: `get`, `update`, `forget`, `restore`, `trash`."""

from __future__ import annotations

import sys

import click

from indexer.cli import output
from indexer.cli.common import SCOPE, CliContext, pass_ctx, warn
from indexer.cli.backend import backend
from indexer.errors import InputError

SPACE = click.option("--space", help="Memory space (a user or character), e.g. alice; default: notes outside spaces/.")


def spaces_option(command):
    """--space NAME (repeatable) and --shared: several spaces, and the notes outside every space, in one ranking."""
    command = click.option("--shared", is_flag=True, help="With --space: the notes outside every space join the ranking.")(command)
    return click.option("--space", "space", multiple=True, help="Memory space (a user or character), e.g. alice; "
                        "repeat it to rank several together; default: notes outside spaces/.")(command)
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
    click.echo(f"the old text is in the trash: mdmem restore {res['previous_id']} puts it back", err=True)


@click.command()
@click.argument("record_id", metavar="[ID]", required=False)
@click.option("--match", "query", help="Forget the memories whose text holds these words (Chinese as written); "
                                       "lists them, add --yes to remove.")
@click.option("--yes", is_flag=True, help="With --match: remove what it lists.")
@click.option("--purge", is_flag=True, help="Remove everywhere at once: no copy in the trash, none in the history.")
@click.option("--limit", "-n", type=int, help="With --match: most memories removed (default: all that hold it).")
@SPACE
@EXPECT
@AS_JSON
@pass_ctx
def forget(c: CliContext, record_id, query, yes, purge, limit, space, expected_hash, as_json):
    """Remove memory ID from its note (headings and other lines stay), or the memories --match TEXT names.
    A removed memory is kept in the trash (`mdmem trash`) and `mdmem restore ID` puts it back."""
    if bool(record_id) == bool(query):
        raise InputError("give a memory ID or --match TEXT, e.g. mdmem forget --match \"old phone number\"")
    mem = backend(c)
    if record_id:
        res = mem.forget(record_id, space=space, expected_hash=expected_hash, purge=purge)
        if as_json:
            _echo_json(res)
            return
        click.echo(f"{'purged' if purge else 'forgot'} {_where(res)}: {' '.join(res['text'].split())[:120]}")
        if not purge:
            click.echo(f"undo: mdmem restore {res['id']}", err=True)
        return
    res = mem.forget_matching(query, space=space, yes=yes, limit=limit, purge=purge)
    if as_json:
        _echo_json(res)
        return
    _tell_matching(res)


def _tell_matching(res: dict) -> None:
    for s in res.get("skipped", []):
        warn(f"left {s['id']} ({s['uri']}) alone: {s['reason']}")
    verb = {"forgotten": "forgot", "purged": "purged"}.get(res["action"], "would forget")
    for m in res["memories"]:
        click.echo(f"{verb} {m['id']} {_where(m)}: {' '.join(m['text'].split())[:120]}")
    for m in res.get("similar", []):
        click.echo(f"similar, not removed: {m['id']} {_where(m)}: {' '.join(m['text'].split())[:120]}")
    if not res["memories"]:
        click.echo("no memory holds those words" + ("; forget one of the similar ones by its ID"
                                                    if res.get("similar") else ""), err=True)
    elif res["action"] == "would_forget":
        click.echo(f"{res['count']} memories hold those words; run again with --yes to forget them", err=True)
    elif res["action"] == "forgotten":
        click.echo("undo: mdmem restore ID (mdmem trash lists them)", err=True)


@click.command()
@click.argument("record_id", metavar="[ID]", required=False)
@click.option("--list", "listing", is_flag=True, help="List the trash instead (as `mdmem trash`).")
@SPACE
@AS_JSON
@pass_ctx
def restore(c: CliContext, record_id, listing, space, as_json):
    """Put a forgotten (or corrected) memory back where it was, from the trash, and index it."""
    if bool(record_id) == listing:
        raise InputError("give the ID of a forgotten memory, or --list; e.g. mdmem restore 0c1add3a148d506e")
    if listing:
        _show_trash(backend(c).trash(space=space), as_json)
        return
    res = backend(c).restore(record_id, space=space)
    if as_json:
        _echo_json(res)
        return
    where = {"in_place": "where it was", "replaced": "in place of the text that corrected it (kept in the trash)",
             "appended": "at the end of the note under '## Restored': the lines around it changed",
             "recreated": "in the note made again: it had been deleted",
             "present": "already in the note: nothing written"}[res["placed"]]
    now = f", id {res['id']}" if res.get("id") else ""
    click.echo(f"restored {_where(res)} {where}{now}: {' '.join(res['text'].split())[:120]}")


@click.command()
@SPACE
@SCOPE
@AS_JSON
@pass_ctx
def trash(c: CliContext, space, scope, as_json):
    """List what forget removed and update replaced, newest first; `mdmem restore ID` puts one back."""
    _show_trash(backend(c).trash(space=space, scope=scope), as_json)


def _show_trash(res: dict, as_json: bool) -> None:
    if as_json:
        _echo_json(res)
        return
    for e in res["entries"]:
        what = "corrected" if e["reason"] == "update" else "forgotten"
        click.echo(f"{e['id']}  {what} {e['removed_at']}  [{e['store']}] {e['uri']}:{e['start_line']}  "
                   f"{' '.join(e['text'].split())[:100]}")
    click.echo(f"{res['count']} in the trash, each kept {res['trash_days']:g} days; mdmem restore ID puts one back",
               err=True)


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
