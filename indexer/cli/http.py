"""`mdmem token`: the bearer token HTTP callers of `serve --http` send (registered by main.py)."""

from __future__ import annotations

import click

from indexer.cli.common import CliContext, pass_ctx


@click.command()
@click.option("--path", "show_path", is_flag=True, help="Print where the token is kept instead of the token.")
@pass_ctx
def token(c: CliContext, show_path):
    """Print the HTTP bearer token (created, private to you, on first use) for mem0 and MCP clients."""
    from indexer.daemon.http_guard import load_token, token_path
    home = c.config().home
    click.echo(str(token_path(home)) if show_path else load_token(home))
