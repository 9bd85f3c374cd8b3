"""The memory browser's way in: one-time login codes, session cookies and their CSRF values, kept in the daemon."""

from __future__ import annotations

import hmac
import secrets
import threading
import time

CODE_TTL_S = 60.0  # `mdmem ui` opens the link at once; a code left in a terminal's scrollback soon stops working
SESSION_TTL_S = 12 * 3600.0
COOKIE = "mdmem_ui"  # + the port: cookies ignore ports, and two daemons (two homes) must not overwrite each other's
CSRF_HEADER = "x-mdmem-csrf"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
LOGIN_PATH = "/ui/login"
# the page's files carry no memory, so they are served without a session (the page says how to get one)
ASSETS = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "app.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8",
          "health.js": "text/javascript; charset=utf-8", "import.js": "text/javascript; charset=utf-8"}
PUBLIC_PATHS = ("/", "/ui", "/ui/", LOGIN_PATH, *(f"/ui/{name}" for name in ASSETS))
TOKEN_ONLY_PREFIXES = ("/mcp", "/v1/ui/link")  # a page's cookie never mints codes nor speaks MCP
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
PAGE_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


class UiSessions:
    """Codes (single use, CODE_TTL_S) and sessions (secret -> CSRF value), in memory only: a restarted
    daemon forgets them and `mdmem ui` makes a new link."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._codes: dict[str, float] = {}
        self._sessions: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def new_code(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._drop_expired()
            self._codes[code] = self._clock() + CODE_TTL_S
        return code

    def redeem(self, code: str | None) -> str | None:
        """A new session's secret for a live code (which is then spent), else None."""
        with self._lock:
            self._drop_expired()
            if not code or self._codes.pop(code, None) is None:
                return None
            secret = secrets.token_urlsafe(32)
            self._sessions[secret] = (secrets.token_urlsafe(24), self._clock() + SESSION_TTL_S)
            return secret

    def csrf(self, headers: dict) -> str | None:
        """The CSRF value of the session the request's cookie names (None: no live session)."""
        secret = cookie_value(headers.get("cookie"), cookie_name(headers.get("host")))
        with self._lock:
            self._drop_expired()
            held = self._sessions.get(secret) if secret else None
        return held[0] if held else None

    def admit(self, method: str, path: str, headers: dict) -> tuple[int, str] | None:
        """None when the request's session cookie lets it in; else the refusal (status, why)."""
        if path.startswith(TOKEN_ONLY_PREFIXES):
            return 401, "missing or wrong token; send Authorization: Bearer <the token from `mdmem token`>"
        csrf = self.csrf(headers)
        if csrf is None:
            return 401, ("missing or wrong token; send Authorization: Bearer <the token from `mdmem token`>, "
                         "or open the memory browser with `mdmem ui`")
        if method not in SAFE_METHODS and not hmac.compare_digest(
                headers.get(CSRF_HEADER, "").encode(), csrf.encode()):
            return 403, f"a change from the memory browser must carry the {CSRF_HEADER} header GET /ui/session gives"
        return None

    def _drop_expired(self) -> None:
        now = self._clock()
        for table in (self._codes, self._sessions):
            for key in [k for k, v in table.items() if (v if isinstance(v, float) else v[1]) <= now]:
                del table[key]


def cookie_name(host: str | None) -> str:
    """The session cookie's name for the server the Host header names (checked by the guard before)."""
    port = (host or "").rpartition(":")[2]
    return f"{COOKIE}_{port}" if port.isdigit() else COOKIE


def cookie_value(header: str | None, name: str) -> str | None:
    for part in (header or "").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name and value:
            return value
    return None


def is_public(path: str) -> bool:
    return path in PUBLIC_PATHS
