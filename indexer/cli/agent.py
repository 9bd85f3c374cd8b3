"""Command-line commands for agents: `add`, `recall` and the `mcp` server."""

from __future__ import annotations

import sys

import click

from indexer.cli import output
from indexer.cli.common import NOW, SCOPE, CliContext, pass_ctx, say_cut, warn
from indexer.cli.backend import backend, daemon_flags
from indexer.cli.memories import SPACE, spaces_option
from indexer import roots, validation
from indexer.errors import ArgumentError, MdmemError
from indexer.notes.names import MEMORY_TYPES as TYPES
from indexer.retrieval.timespan import bounds, today


@click.command()
@click.argument("text")
@click.option("--type", "type_", type=click.Choice(TYPES), default="fact", show_default=True)
@click.option("--importance", type=int, help="1-5, this memory's own (an item marker).")
@click.option("--scope", type=click.Choice(["global", "project"]), help="Default: global for preference/fact/entity, project for decision/episodic.")
@click.option("--file", "file", help="Note path inside the store root, e.g. agent/notes.md.")
@click.option("--redact", is_flag=True, help="Mask secrets instead of refusing the text.")
@click.option("--supersedes", metavar="ID", help="The memory this one replaces: struck through in its note, kept.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@SPACE
@pass_ctx
def add(c: CliContext, text, type_, importance, scope, file, redact, supersedes, as_json, space):
    """Write a memory to Markdown (TEXT, or - for stdin) and index it at once."""
    validation.check_given(importance=importance)
    if text == "-":
        text = sys.stdin.read()
    res = backend(c).add(text, type=type_, importance=importance, scope=scope, file=file, redact=redact, space=space,
                         supersedes=supersedes)
    if as_json:
        output.emit(res)
        return
    if res["redacted"]:
        warn(f"redacted: {', '.join(res['redacted'])}")
    verb = "reinforced" if res["action"] == "reinforced" else "added to"
    click.echo(f"{verb} [{res['store']}] {res['uri']}:{res['start_line']}-{res['end_line']}"
               + (f" id {res['id']}" if res.get("id") else ""))
    if res.get("superseded"):
        old = res["superseded"]
        click.echo(f"superseded {old['uri']}:{old['start_line']} {old['text']!r} (id {old['id']})")


@click.command()
@click.argument("query")
@click.option("--context", "context", type=click.File("r", encoding="utf-8"), help="Recent conversation (file or -): used when the query alone is weak.")
@click.option("--limit", "-n", type=int, help="Memories considered (default 8).")
@click.option("--max-chars", type=int, help="Size budget of the block (default 1500).")
@click.option("--max-tokens", type=int, help="Size budget in tokens, besides --max-chars, e.g. 400.")
@SCOPE
@click.option("--since", help="Only memories dated on or after this day: 2026-03-01, 7d, 2w, 3m.")
@click.option("--until", help="Only memories dated on or before this day: 2026-03-31, 7d, 2w, 3m.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@NOW
@spaces_option
@pass_ctx
def recall(c: CliContext, query, context, limit, max_chars, max_tokens, scope, since, until, as_json, now, space,
           shared):
    """Print the memory block an agent puts in its prompt; prints nothing if the index is unavailable."""
    if not query.strip():  # the caller's mistake: an error, not the silence of a memory that is down
        raise ArgumentError("query", "is empty; give the task or question", None, 'mdmem recall "where do I work?"')
    validation.check_given(limit=limit, max_chars=max_chars, max_tokens=max_tokens)  # the caller's mistake: an error
    space, spaces = validation.space_flags(space, shared)
    bounds(since, until, today(now))  # so is a mistyped date or --now
    try:
        mem = backend(c)  # the daemon's warm model when it runs
        res = mem.recall(query, context=context.read() if context else None, limit=limit, max_chars=max_chars,
                         scope=scope, space=space, since=since, until=until, now=now, spaces=spaces,
                         max_tokens=max_tokens)
    except ArgumentError:
        raise
    except MdmemError as exc:
        warn(f"recall unavailable ({exc}); answering without long-term memory")
        return  # an agent's turn must never fail because memory is down
    if as_json:
        output.emit(res)
        return
    say_cut(res.get("query_truncated"), "last")
    if res["text"]:
        click.echo(res["text"])


@click.command()
@click.option("--verbose", is_flag=True, help="Log every refused call to stderr (default: only real problems).")
@pass_ctx
def mcp(c: CliContext, verbose):
    """Serve the memory to MCP clients over stdio (memory_search, _recall, _add, _get, _update, _forget, ...)."""
    from indexer.mcp.server import serve_stdio
    from indexer.protocol import one_at_a_time, one_each
    from indexer.remote import RemoteMemory, remote_memory
    roots.check_named_for_client(c.home, c.create)  # a client must never be served a store made up on the spot
    mem, cfg, flags = backend(c), c.config(), daemon_flags(c)

    def another():
        remote = remote_memory(cfg, flags=flags)
        if remote is None:
            raise MdmemError("the daemon stopped answering; start it again (`mdmem serve`) and retry")
        return remote
    # through the daemon each call runs at once on a connection of its own; in this process one at a time
    serve_stdio(one_each(mem, another) if isinstance(mem, RemoteMemory) else one_at_a_time(mem), cfg,
                verbose=verbose)
