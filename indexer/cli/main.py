"""The `mdmem` command line: parse, call one library function, render. Nothing imports this."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from indexer.cli import output
from indexer.cli.common import (NOW, SCOPE, CliContext, pass_ctx, print_hits, progress_bar, ranking_flags,
                                say_if_empty, warn)
from indexer.cli.backend import backend
from indexer.cli.memories import spaces_option
from indexer import config as config_mod, validation
from indexer.errors import ArgumentError, InputError, MdmemError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(path_type=Path), help="Global store root (default $MDMEM_HOME or ~/.mdmem).")
@click.option("--project", type=click.Path(path_type=Path), help="Project folder or its .mdmem folder (default: nearest ancestor with .mdmem/).")
@click.option("--embedder", type=click.Choice(config_mod.EMBEDDERS), help="Embedding model provider ([embedder] provider).")
@click.option("--st-model", help="sentence-transformers model folder or name.")
@click.option("--embedder-model", help="The provider's model ([embedder] model), e.g. text-embedding-3-small.")
@click.option("--embedder-url", help="The provider's base URL ([embedder] base_url), e.g. http://localhost:11434.")
@click.option("--device", help="Device for sentence-transformers: auto, cpu, cuda.")
@click.option("--create", is_flag=True, help="Create a missing --home / --project store instead of refusing it.")
@click.version_option(package_name="mdmem")
@click.pass_context
def cli(ctx, home, project, embedder, st_model, embedder_model, embedder_url, device, create):
    """Long-term memory over plain Markdown notes."""
    ctx.obj = CliContext(home=home, project=project, create=create,
                         settings={"embedder": embedder, "st_model": st_model, "device": device,
                                   "embedder_model": embedder_model, "embedder_base_url": embedder_url})
    ctx.call_on_close(ctx.obj.close)


@cli.command()
@pass_ctx
def index(c: CliContext):
    """Sync the index with the notes: new, changed and deleted files only."""
    mem = backend(c)
    for rep in mem.index(progress=progress_bar("indexing")):
        click.echo(f"{rep.store}: {rep.files} files, {rep.indexed} indexed, {rep.unchanged} unchanged, "
                   f"{rep.deleted} deleted, {rep.chunks_added} chunks added, {rep.chunks_removed} removed, "
                   f"{rep.embedded} embedded, {len(rep.skipped)} skipped in {rep.seconds:.2f}s")


@cli.command()
@SCOPE
@click.option("--no-cache", is_flag=True, help="Re-embed everything instead of reusing vectors of unchanged text.")
@click.option("--embedder", type=click.Choice(config_mod.EMBEDDERS), help="Re-embed with this provider (as the global --embedder).")
@pass_ctx
def rebuild(c: CliContext, scope, no_cache, embedder):
    """Recreate the index from the Markdown into a new file and swap it in atomically."""
    if embedder:
        c.settings["embedder"] = embedder
    mem = backend(c)  # a running daemon rebuilds (shadow file, swap) and streams progress
    for rep in mem.rebuild(scope=scope, no_cache=no_cache, progress=progress_bar("rebuilding")):
        click.echo(f"{rep.store}: rebuilt {rep.indexed} files, {rep.chunks_added} chunks, "
                   f"{rep.embedded} embedded, {len(rep.skipped)} skipped in {rep.seconds:.2f}s")


@cli.command()
@click.argument("query", required=False)
@click.option("--mode", type=click.Choice(["hybrid", "fts", "vector"]), help="Default: hybrid.")
@SCOPE
@click.option("--limit", "-n", type=int, help="Number of hits (default 10).")
@click.option("--under", multiple=True, help="Only notes whose uri starts with this prefix (repeatable).")
@click.option("--min-score", type=float, help="Drop hits scoring below this.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--explain", is_flag=True, help="Show each score component.")
@click.option("--since", help="Only memories dated on or after this day: 2026-03-01, 7d, 2w, 3m.")
@click.option("--until", help="Only memories dated on or before this day: 2026-03-31, 7d, 2w, 3m.")
@NOW
@spaces_option
@click.option("--batch", type=click.File("r", encoding="utf-8"), help='JSONL file of {"qid","query"[,"under","scope","limit","now"]}; "-" for stdin.')
@pass_ctx
def search(c: CliContext, query, mode, scope, limit, under, min_score, as_json, explain, since, until, now, batch,
           space, shared):
    """Hybrid (full-text + vector) search over the global and project notes."""
    validation.check_given(limit=limit, min_score=min_score)
    space, spaces = validation.space_flags(space, shared)
    mem = backend(c)  # the daemon's warm model when it runs, else in-process
    if batch is not None:
        _search_batch(mem, batch, mode, scope, limit, list(under), min_score, explain,
                      {"since": since, "until": until, "now": now}, c.config().max_query_chars)
        return
    if not query:
        raise InputError("give a QUERY, e.g. mdmem search \"backup plan\", or --batch FILE")
    hits = mem.search(query, mode=mode, scope=scope, limit=limit, under=under, min_score=min_score, explain=explain,
                      space=space, since=since, until=until, now=now, spaces=spaces)
    most = c.config().max_query_chars  # the cut itself is the search's (validation.question): this only tells it
    print_hits(hits, as_json, explain, validation.question(query, most), validation.truncation(query, most))
    if not hits and not as_json:
        say_if_empty(mem, scope)


def _search_batch(mem, batch, mode, scope, limit, under, min_score, explain, span, most):
    for n, line in enumerate(batch, 1):
        if not line.strip():
            continue
        qid = n
        try:
            item = _batch_item(line)
            qid = item.get("qid", n)
            if not isinstance(item.get("query"), str):
                raise InputError(f"needs a \"query\" string, {_BATCH_EXAMPLE}")
            hits = mem.search(item["query"], mode=mode, scope=item.get("scope", scope),
                              limit=item.get("limit", limit), under=item.get("under", under),
                              min_score=min_score, explain=explain,
                              **{k: item.get(k, v) for k, v in span.items()})
            cut = validation.truncation(item["query"], most)
            out = {"qid": qid, "results": [h.to_dict(explain) for h in hits], **({"query_truncated": cut} if cut else {}),
                   **ranking_flags(hits)}
        except MdmemError as exc:
            warn(f"batch line {n}: {exc}")
            out = {"qid": qid, "results": [], "error": str(exc)}
        output.emit(out)


_BATCH_EXAMPLE = 'e.g. {"qid": "q1", "query": "backup plan"}'


def _batch_item(line: str) -> dict:
    """One JSONL line of a batch as a dict, or InputError saying what is wrong."""
    try:
        item = json.loads(line)
    except ValueError as exc:
        raise InputError(f"not JSON ({exc}); each line is one object, {_BATCH_EXAMPLE}") from None
    if not isinstance(item, dict):
        raise InputError(f"each line must be a JSON object, {_BATCH_EXAMPLE}")
    return item


@cli.command()
@SCOPE
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def stats(c: CliContext, scope, as_json):
    """Files, chunks and vectors per store, with counts by type."""
    output.per_store(backend(c).stats(scope), as_json, _stats_line)


def _stats_line(name: str, s: dict) -> str:
    types = ", ".join(f"{k} {v}" for k, v in s["by_type"].items()) or "none"
    return (f"{name}: {s['files']} files, {s['chunks']} chunks ({s['memories']} memories, "
            f"{s['sections']} sections), {s['vectors']} vectors, "
            f"{s['tokens']} tokens, {s['accesses']} accesses ({s['embedder']}) — {s['index']}\n  by type: {types}")


@cli.command()
@pass_ctx
def doctor(c: CliContext):
    """Check the extension, FTS5, the model, store paths and index identity; exit 1 on a problem."""
    from indexer.sync.doctor import run_checks
    checks = run_checks(c.config())
    for ch in checks:
        click.echo(f"{'ok ' if ch.ok else 'BAD'}  {ch.name}: {ch.detail}")
    if not all(ch.ok for ch in checks):
        sys.exit(1)


def _discover_commands() -> None:
    """Every click command defined in a module of this package is one of mdmem's: a new command is a
    decorated function in a module here, with nothing else to list."""
    import importlib
    import pkgutil

    import indexer.cli as package
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        values = list(vars(module).values())
        # a group's own subcommands (`models pull`) are not commands of their own
        under = {id(sub) for v in values if isinstance(v, click.Group) for sub in v.commands.values()}
        for value in values:
            if isinstance(value, click.Command) and value is not cli and value.callback.__module__ == module.__name__ \
                    and id(value) not in under:
                cli.add_command(value)


_discover_commands()


OPTION_SHAPE = re.compile(r"--?[A-Za-z][A-Za-z0-9_-]{0,39}")


def shortened(text: str, most: int = 80) -> str:
    """text cut to `most` characters, each of its words too (an argument pasted into a message)."""
    words = [w if len(w) <= most else w[:most - 1] + "…" for w in str(text).split(" ")]
    text = " ".join(words)
    return text if len(text) <= most * 3 else text[:most * 3 - 1] + "…"


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="mdmem")
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.exceptions.NoSuchOption as exc:
        if OPTION_SHAPE.fullmatch(exc.option_name):  # a mistyped option: click's usage and "did you mean"
            exc.message = shortened(exc.message)
            exc.show()
            sys.exit(exc.exit_code)
        # text that starts with a dash (a question, a pasted line) is read as an option
        command = exc.ctx.command_path if exc.ctx is not None else "mdmem"
        text = next((a for a in sys.argv[1:] if a.startswith(exc.option_name)), exc.option_name)  # "-5 度" as typed
        click.echo(f"error: {shortened(text, 40)!r} was read as an option; put -- before text that "
                   f"starts with -, e.g. {command} -- \"{shortened(text, 12)}\"", err=True)
        sys.exit(2)
    except click.UsageError as exc:
        exc.message = shortened(exc.message)  # an argument is never echoed whole (a pasted 10 KB question)
        exc.show()
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except MdmemError as exc:
        click.echo(f"error: {exc.for_cli() if isinstance(exc, ArgumentError) else exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
