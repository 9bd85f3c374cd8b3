"""`mdmem start`, `stop`, `restart`: the daemon in the background without systemd, with a pid file and a log file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click

from indexer.cli.common import CliContext, pass_ctx
from indexer.daemon import lock_file
from indexer.private_files import open_private

PID_NAME = ".mdmem-serve.pid"  # dot names in the global store: never taken for notes, private like the index
LOG_NAME = ".mdmem-serve.log"
LOG_KEEP_BYTES = 10 * 2**20  # a log past this is moved to `.1` at the next start, so it never grows without end


def files(home: Path) -> tuple[Path, Path]:
    """The pid file and log file `mdmem start` keeps for this global store."""
    return home / PID_NAME, home / LOG_NAME


def serving_pid(home: Path) -> int | None:
    """The pid of the daemon that holds this store's lock (-1: unreadable), or None when no daemon serves it."""
    words = lock_file.holder(home)
    if words is None:
        return None
    return int(words[0]) if words and words[0].isdigit() else -1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _open_log(path: Path) -> int:
    if path.exists() and path.stat().st_size > LOG_KEEP_BYTES:
        os.replace(path, path.with_name(path.name + ".1"))
    return open_private(path)  # the log names notes and quotes their problems: private like them


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _serve_argv(c: CliContext, home: Path, options: list[str]) -> list[str]:
    argv = [sys.executable, "-m", "indexer", "--home", str(home)]
    if c.project is not None:
        argv += ["--project", str(Path(c.project).expanduser().resolve())]
    for name, value in c.settings.items():
        if value:
            argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv + ["serve", *options]


def _answers(cfg, http: str | None) -> bool:
    """Whether the daemon answers on its socket and, asked for HTTP, on its port with this store's token
    (the socket opens before the port is bound, and a port taken by another program fails only then)."""
    from indexer.remote import connect
    client = connect(cfg, timeout=2)
    if client is None:
        return False
    client.close()
    if not http:
        return True
    import urllib.request
    from indexer.daemon.http_guard import parse_listen, token_path
    host, port = parse_listen(http)
    try:
        token = token_path(cfg.home).read_text().strip()
        ping = urllib.request.Request(f"http://{'[' + host + ']' if ':' in host else host}:{port}/v1/ping/",
                                      headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(ping, timeout=2) as answer:
            return answer.status == 200
    except (OSError, ValueError):
        return False


def _start(c: CliContext, options: list[str], wait_s: float, http: str | None) -> None:
    cfg = c.config()
    pid_file, log_file = files(cfg.home)
    holder = serving_pid(cfg.home)
    if holder is not None:
        click.echo(f"a daemon already serves {cfg.home} (pid {holder}); `mdmem stop` stops it")
        return
    log_fd = _open_log(log_file)
    try:
        proc = subprocess.Popen(_serve_argv(c, cfg.home, options), stdin=subprocess.DEVNULL, stdout=log_fd,
                                stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                                cwd=str(cfg.home))
    finally:
        os.close(log_fd)
    _write_private(pid_file, f"{proc.pid}\n")
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pid_file.unlink(missing_ok=True)
            raise click.ClickException(f"the daemon exited with status {proc.returncode}; its log {log_file} "
                                       f"ends:\n{_tail(log_file)}")
        if _answers(cfg, http):
            click.echo(f"mdmem daemon started: pid {proc.pid}, log {log_file}; `mdmem stop` stops it")
            return
        time.sleep(0.2)
    click.echo(f"the daemon (pid {proc.pid}) is still starting after {wait_s:g} s; `mdmem status` says when it "
               f"answers, its log is {log_file}", err=True)
    sys.exit(75)


def _stop(home: Path, wait_s: float) -> bool:
    """Stop the daemon serving home; False when none did."""
    pid_file, log_file = files(home)
    words = lock_file.holder(home)
    if words is None:
        pid_file.unlink(missing_ok=True)
        return False
    if not words or not words[0].isdigit():
        raise click.ClickException(f"a daemon holds {home / lock_file.LOCK_NAME} but its pid is unreadable; "
                                   "stop it by hand")
    pid = int(words[0])
    if lock_file.by_systemd(words):
        raise click.ClickException(f"systemd runs the daemon serving {home} (pid {pid}): "
                                   "`systemctl --user stop mdmem` stops it (else systemd may start it again)")
    os.kill(pid, signal.SIGTERM)  # the daemon indexes the saves its debounce holds, commits and exits 0
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not _alive(pid) or serving_pid(home) is None:
            pid_file.unlink(missing_ok=True)
            click.echo(f"mdmem daemon stopped (pid {pid})")
            return True
        time.sleep(0.1)
    click.echo(f"the daemon (pid {pid}) is still stopping after {wait_s:g} s; its log is {log_file}. "
               f"`kill -9 {pid}` loses nothing a caller was told is saved: the next start reconciles", err=True)
    sys.exit(75)


def _serve_options(f):
    f = click.option("--wait", "wait_s", type=float, default=120.0, show_default=True,
                     help="Seconds to wait for the daemon to answer (a first start unpacks the model).")(f)
    f = click.option("--allow-origin", "origins", multiple=True, metavar="ORIGIN",
                     help="With --http: let this browser page call the API (see `mdmem serve --help`).")(f)
    f = click.option("--http", "http", metavar="HOST:PORT", help="Also serve MCP and mem0's REST API on loopback.")(f)
    f = click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]))(f)
    return f


def _options(http, origins, log_level) -> list[str]:
    out = ["--http", http] if http else []
    for origin in origins:
        out += ["--allow-origin", origin]
    return out + (["--log-level", log_level] if log_level else [])


@click.command()
@_serve_options
@pass_ctx
def start(c: CliContext, http, origins, log_level, wait_s):
    """Start the daemon in the background (its log in the global store's .mdmem-serve.log)."""
    _check(http, origins)
    _start(c, _options(http, origins, log_level), wait_s, http)


def _check(http, origins) -> None:
    """Refuse what `serve` would refuse before anything starts, so the answer is at once and one line."""
    if origins and not http:
        raise click.UsageError("--allow-origin needs --http HOST:PORT (the origins are let into that server)")
    if http:
        from indexer.daemon.http_guard import parse_listen, parse_origin
        parse_listen(http)
        for origin in origins:
            parse_origin(origin)


@click.command()
@click.option("--wait", "wait_s", type=float, default=60.0, show_default=True,
              help="Seconds to wait for the daemon to finish what it holds and exit.")
@pass_ctx
def stop(c: CliContext, wait_s):
    """Stop the daemon serving this global store (SIGTERM: it finishes what it holds, then exits)."""
    home = c.config().home
    if not _stop(home, wait_s):
        click.echo(f"no daemon serves {home}")


@click.command()
@_serve_options
@pass_ctx
def restart(c: CliContext, http, origins, log_level, wait_s):
    """Stop the daemon serving this global store if one runs, then start it in the background."""
    _check(http, origins)
    _stop(c.config().home, 60.0)
    _start(c, _options(http, origins, log_level), wait_s, http)
