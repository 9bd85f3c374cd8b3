"""Command-line commands of the daemon: serve, status, decay, cleanup."""

from __future__ import annotations

import sys
import time

import click

from indexer.cli import output
from indexer.cli.backend import backend
from indexer.cli.common import SCOPE, CliContext, pass_ctx



@click.command()
@click.option("--debounce-ms", type=int, help="Quiet time per path before reindexing (default 300).")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), help="Default: info.")
@click.option("--http", "http", metavar="HOST:PORT", help="Also serve MCP and mem0's REST API on loopback, e.g. 127.0.0.1:8765.")
@click.option("--allow-origin", "origins", multiple=True, metavar="ORIGIN",
              help="With --http: let a browser page of this origin call the API (it still sends the token), "
                   "e.g. SillyTavern's http://127.0.0.1:8000. Repeatable.")
@pass_ctx
def serve(c: CliContext, debounce_ms, log_level, http, origins):
    """Run the daemon in the foreground: reconcile, watch both roots, serve the socket, run the passes."""
    from indexer.daemon.service import reload_from, serve as run_daemon
    flags = {"debounce_ms": debounce_ms, "log_level": log_level}
    cfg = c.config(**flags)
    web = None
    if http:
        from indexer.mcp.server import build_server
        from indexer.daemon.http_guard import parse_listen, parse_origin
        parse_listen(http)  # a bad address fails before any store is locked
        web = (http, build_server, tuple(parse_origin(o) for o in origins))
    elif origins:
        raise click.UsageError("--allow-origin needs --http HOST:PORT (the origins are let into that server)")
    sys.exit(run_daemon(cfg, reload_config=reload_from(c.home, c.project, {**c.settings, **flags}), http=web))


@click.command()
@SCOPE
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def status(c: CliContext, scope, as_json):
    """Per store: files, chunks, pending events, last sync, and whether results may be stale."""
    from indexer.sync.ranking_vectors import wanted
    ranks = wanted(c.config())  # without the e5 stage configured no store waits for its vectors
    output.per_store(backend(c).status(scope), as_json, lambda name, s: _status_line(name, s, ranks))
    if not as_json:
        _say_background(c.config().home)


def _say_background(home) -> None:
    """Name the pid and log files when `mdmem start` started the daemon serving this store."""
    from indexer.cli.background import files, serving_pid
    pid_file, log_file = files(home)
    try:
        started = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    if serving_pid(home) == started:
        click.echo(f"started by `mdmem start`: pid {started} ({pid_file}), log {log_file}; `mdmem stop` stops it")


def _status_line(name: str, s: dict, ranks: bool = False) -> str:
    if s.get("missing"):
        return (f"{name}: root {s['root']} is missing ({s['missing']}); searches find nothing in it "
                f"until the folder is back — daemon pid {s['pid']}")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s["last_sync"])) if s.get("last_sync") else "never"
    who = f"daemon pid {s['pid']}" + (" (polling)" if s.get("polling") else "") if s.get("daemon") else "no daemon"
    pending = f"{s['pending']} pending" if s.get("daemon") else f"{s['pending']} files differ from the index"
    skipped = f", {s['skipped']} skipped (see `mdmem verify`)" if s.get("skipped") else ""
    done, texts = (s.get("e5") or [0, 0])[:2]  # a big `index` leaves them to later: its searches rank without them
    if ranks and done < texts:
        pending += f", ranking model {done} of {texts} texts (the daemon fills the rest, each `mdmem index` some)"
    return (f"{name}: {s['files']} files, {s['chunks']} chunks{skipped}, {pending}, last sync {when}, "
            f"{'may be STALE' if s['stale'] else 'up to date'} — {who}")


def _pass_command(name: str, doc: str, line):
    """`decay` and `cleanup`: run one pass per store now and print a line (or JSON) per store."""

    @click.command(name=name, help=doc)
    @SCOPE
    @click.option("--json", "as_json", is_flag=True)
    @pass_ctx
    def run_pass(c: CliContext, scope, as_json):
        reports = output.by_store(getattr(backend(c), name)(scope))
        output.per_store(reports, as_json, lambda store, r: f"{store}: {line(r)}")

    return run_pass


decay = _pass_command(
    "decay", "Run the decay pass now: recompute every chunk's strength (evergreen notes stay at 1).",
    lambda r: f"{r['updated']} of {r['chunks']} chunks changed strength in {r['seconds']:.2f}s")
cleanup = _pass_command(
    "cleanup", "Run the cleanup pass now: vanished files, orphan rows, FTS optimise, WAL checkpoint, the trash past "
    "trash_days, decided entries of the decision log past decisions_days. Never edits notes.",
    lambda r: f"{r['vanished_files']} vanished files ({r['chunks_removed']} chunks), {r['orphan_vectors']} orphan "
              f"vectors removed, {r['dead_aliases']} ids of forgotten memories dropped, FTS {'rebuilt' if r['fts_rebuilt'] else 'in step'} and optimised, WAL checkpointed "
              f"in {r['seconds']:.2f}s" + (f"; {r['trash_expired']} forgotten memories left the trash"
                                           if r.get("trash_expired") else "")
              + (f"; {r['decisions_expired']} decided entries left the decision log" if r.get("decisions_expired")
                 else ""))
