"""`mdmem ui`: a one-time login link to the memory browser of a running `serve --http` (registered by main.py)."""

from __future__ import annotations

import json

import click

from indexer.cli.common import CliContext, pass_ctx
from indexer.errors import StoreError

DEFAULT_HTTP = "127.0.0.1:8765"


@click.command()
@click.option("--http", "http", metavar="HOST:PORT", default=DEFAULT_HTTP, show_default=True,
              help="Where the daemon serves HTTP (as given to `mdmem start --http`).")
@click.option("--no-browser", is_flag=True, help="Print the link instead of opening it.")
@pass_ctx
def ui(c: CliContext, http, no_browser):
    """Open the memory browser: search, recall preview, memories (edit, forget, undo) and health, with a
    login link that works once, within a minute."""
    import urllib.error
    import urllib.request
    import webbrowser

    from indexer.daemon.http_guard import load_token, parse_listen
    host, port = parse_listen(http)
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    ask = urllib.request.Request(f"{base}/v1/ui/link", data=b"{}", method="POST", headers={
        "Authorization": f"Bearer {load_token(c.config().home)}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(ask, timeout=10) as answer:
            url = json.loads(answer.read())["url"]
    except urllib.error.HTTPError as exc:
        raise StoreError(f"{base} refused a login link ({exc.code}); is it this store's daemon? "
                         f"start one with `mdmem start --http {http}`") from None
    except (OSError, ValueError, KeyError):
        raise StoreError(f"no mdmem daemon serves HTTP on {host}:{port}; start one with "
                         f"`mdmem start --http {http}`, then run `mdmem ui` again") from None
    if no_browser or not webbrowser.open(url):
        click.echo(url)
