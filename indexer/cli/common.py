"""Shared pieces of the command line: the per-invocation context, warnings, hit rendering."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from indexer import config as config_mod
from indexer import roots
from indexer.cli import output
from indexer.models import Hit

if TYPE_CHECKING:
    from indexer.memory import Memory


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def notice(message: str) -> None:
    click.echo(message, err=True)


# the stores a command reads: every --scope of the CLI is this one option
SCOPE = click.option("--scope", type=click.Choice(config_mod.SCOPES), default="all", show_default=True)
NOW = click.option("--now", help="The day time words count from (上周, last week): 2026-11-25; default: today.")


@dataclass
class CliContext:
    """What the global options gave; the Memory is opened only by commands that need it."""

    home: Path | None
    project: Path | None
    settings: dict = field(default_factory=dict)
    create: bool = False  # --create: make missing store roots instead of refusing them
    _memory: Memory | None = None
    _configs: dict = field(default_factory=dict)

    def config(self, **flags) -> config_mod.Config:
        """The configuration, read once per invocation (defaults < file < environment < flags)."""
        key = tuple(sorted(flags.items()))
        if key not in self._configs:
            cfg = config_mod.load(home=self.home, project=self.project, **{**self.settings, **flags})
            # nothing opens a store before its root is known to be meant (a typo never creates one)
            roots.check_roots(cfg, roots.explicit(self.home, "MDMEM_HOME"),
                              roots.explicit(self.project, "MDMEM_PROJECT"), create=self.create, notice=notice,
                              served=_daemon_serves)
            self._configs[key] = cfg
        return self._configs[key]

    def memory(self, **flags) -> Memory:
        if self._memory is None:
            from indexer.memory import Memory  # loaded only when this process serves the command itself
            self._memory = Memory(cfg=self.config(**flags), warn=warn)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def _daemon_serves(cfg: config_mod.Config) -> bool:
    from indexer.remote import connect
    client = connect(cfg, timeout=2)
    if client is None:
        return False
    client.close()
    return True


pass_ctx = click.make_pass_decorator(CliContext)
DEGRADED = ("degraded: ranked without some vectors (the embedding provider is down, or notes wait for their "
            "vectors: `mdmem status`); full-text matches are all here")


def hit_line(rank: int, hit: Hit, width: int = 160) -> str:
    section = f"  § {hit.section}" if hit.section else ""
    text = " ".join(hit.content.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return (f"{rank:>2}. {hit.score:.3f}  [{hit.store}] {hit.uri}:{hit.start_line}-{hit.end_line}{section}\n"
            f"    {text}")


def ranking_flags(hits: list[Hit]) -> dict:
    """What a search answer says beside its results when part of the ranking was missing (docs/JSON.md)."""
    pending = sum(h.ranking_pending for h in hits)
    return {**({"degraded": True} if any(h.degraded for h in hits) else {}),
            **({"ranking_pending": pending} if pending else {})}


def print_hits(hits: list[Hit], as_json: bool, explain: bool, query: str = "", cut: dict | None = None) -> None:
    """cut: what was cut of a long query (validation.truncation), said in the JSON and on stderr."""
    flags = ranking_flags(hits)
    if as_json:
        output.emit({"query": query, "results": [h.to_dict(explain) for h in hits],
                     **({"query_truncated": cut} if cut else {}), **flags})
        return
    say_cut(cut, "first")
    if flags.get("degraded"):
        click.echo(DEGRADED, err=True)
    if flags.get("ranking_pending"):
        click.echo(f"ranked without the ranking model for {flags['ranking_pending']} of {len(hits)} hits (their "
                   "vectors are still being filled): run `mdmem index` or keep the daemon running", err=True)
    if not hits:
        click.echo("no matches", err=True)
    for i, h in enumerate(hits, 1):
        click.echo(hit_line(i, h))
    if explain:
        for line in output.explain_table(hits):
            click.echo(line)


def say_cut(cut: dict | None, part: str) -> None:
    """One line on stderr when a query over max_query_chars was cut (part: "first" or "last")."""
    if cut:
        click.echo(f"note: the query has {cut['chars']:,} characters; only its {part} {cut['kept']:,} were searched "
                   "(max_query_chars)", err=True)


def say_if_empty(mem, scope: str) -> None:
    """After a search found nothing: tell a store that holds no notes yet from one that holds no match."""
    empty = [(name, s) for name, s in mem.status(scope).items() if not s.get("chunks") and not s.get("missing")]
    for name, s in empty:
        fix = "run `mdmem index`" if s.get("pending") else "write *.md notes there or use `mdmem add`"
        click.echo(f"the {name} store at {s['root']} is empty: {fix}", err=True)


def progress_bar(label: str, every: float = 30.0):
    """A callback (done, total) drawing a bar on a terminal; elsewhere (a log, a pipe) a line on stderr every
    `every` seconds and one at the end, so a long import under nohup shows how far it got (a short one says
    nothing)."""
    if not sys.stderr.isatty():
        import time
        state: dict = {"next": time.monotonic() + every, "since": (time.monotonic(), 0)}

        def line(done: int, total: int) -> None:
            now = time.monotonic()
            if total and (now >= state["next"] or (done >= total and state.get("spoke"))):
                # the pace since the last line: a run started again skips its first notes at a sprint
                t, was = state["since"]
                rate = (done - was) / max(now - t, 1e-9)
                left = f", about {(total - done) / rate / 60:.0f} min left" if 0 < done < total and rate > 0 else ""
                state["next"], state["spoke"], state["since"] = now + every, True, (now, done)
                click.echo(f"{label}: {done:,} of {total:,}{left}", err=True)

        return line
    from rich.progress import Progress
    state = {}

    def update(done: int, total: int) -> None:
        if "p" not in state:
            state["p"] = Progress(transient=True)
            state["p"].start()
            state["t"] = state["p"].add_task(label, total=total)
        state["p"].update(state["t"], completed=done, total=total)
        if done >= total:
            state.pop("p").stop()

    return update
