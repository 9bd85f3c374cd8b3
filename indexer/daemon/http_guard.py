"""What HTTP on loopback checks before a request reaches the memory: address, token, Host, Origin, size."""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from indexer.errors import ConfigError, MdmemError
from indexer.private_files import make_private_dirs

TOKEN_FILE = ".http-token"  # in the global store's root; a dot name, never taken for a note
MAX_BODY = 1024 * 1024  # one request of memories; a 10 MB body is refused unread
LOOPBACK_NAMES = ("localhost",)


def parse_listen(text: str) -> tuple[str, int]:
    """`127.0.0.1:8765`, `[::1]:8765`, `localhost:8765` or a bare port; anything not loopback is refused."""
    text = str(text).strip()
    host, port = "127.0.0.1", text
    if ":" in text:
        host, _, port = text.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http {text!r}: give HOST:PORT on loopback, e.g. --http 127.0.0.1:8765")
    if host in LOOPBACK_NAMES:
        host = "127.0.0.1"
    if not is_loopback(host):
        raise ConfigError(f"--http {text!r}: mdmem serves HTTP on loopback only (127.0.0.1 or ::1); put a proxy "
                          "with its own authentication in front to reach it from elsewhere")
    return host, int(port)


def is_loopback(host: str | None) -> bool:
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Host header values a browser sends only when it really talks to us (a rebinding name is none of them)."""
    names = {"127.0.0.1", "localhost", "[::1]"} | ({f"[{host}]"} if ":" in host else {host})
    return frozenset(n for name in names for n in (name, f"{name}:{port}"))


def host_ok(header: str | None, allowed: frozenset[str]) -> bool:
    return header is not None and header.strip().lower() in allowed


def origin_ok(header: str | None, allowed: frozenset[str], pages: frozenset[str] = frozenset()) -> bool:
    """No Origin (curl, SDKs) is fine; a browser page is only let in from our own origin or one named by
    `--allow-origin` (a page of another local program, e.g. SillyTavern's, still has to send the token)."""
    if header is None:
        return True
    if header.strip().lower().rstrip("/") in pages:
        return True
    parts = urlsplit(header.strip().lower())
    return parts.scheme in ("http", "https") and parts.netloc in allowed


def parse_origin(text: str) -> str:
    """`http://127.0.0.1:8000` as a browser sends it in Origin: scheme and host[:port], nothing else."""
    raw = str(text).strip().lower().rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
        raise ConfigError(f"--allow-origin {text!r}: give the page's origin as the browser shows it, "
                          "e.g. --allow-origin http://127.0.0.1:8000")
    return raw


def cors_headers(origin: str) -> list[tuple[bytes, bytes]]:
    """What lets a page of an allowed origin read our answers; preflights are cached for 10 minutes."""
    return [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin"),
            (b"access-control-allow-methods", b"GET, POST, PUT, DELETE, OPTIONS"),
            (b"access-control-allow-headers", b"authorization, content-type, x-api-key"),
            (b"access-control-max-age", b"600")]


def token_path(home: Path) -> Path:
    return Path(home) / TOKEN_FILE


def load_token(home: Path) -> str:
    """The bearer token, created (0600, random) on first use; a copy others can read is made private again."""
    path = token_path(home)
    make_private_dirs(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < 16:
            raise MdmemError(f"{path} holds no usable token; delete it and a new one is made on the next start")
        return token
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_urlsafe(32) + "\n")
    return load_token(home)


def presented_token(authorization: str | None, api_key: str | None) -> str | None:
    """`Authorization: Bearer T` (or mem0's `Token T`), else `X-API-Key: T`."""
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() in ("bearer", "token") and value.strip():
            return value.strip()
    return api_key.strip() if api_key else None


def token_ok(presented: str | None, token: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), token.encode())
