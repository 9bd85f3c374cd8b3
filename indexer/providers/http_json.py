"""The one way mdmem talks to a model server: a JSON POST with a deadline, retries and backoff."""

from __future__ import annotations

import email.utils
import json
import socket
import time
import urllib.error
import urllib.request

from indexer.errors import ProviderError, ProviderUnavailable

BACKOFF_S = 0.5  # first wait between tries; doubles each try
MAX_WAIT_S = 30.0  # a Retry-After longer than this is capped (the call's deadline still bounds it)
RETRIED = (408, 409, 425, 429, 500, 502, 503, 504)


def post_json(url: str, body: dict, *, headers: dict, timeout_s: float, max_retries: int, provider: str,
              key_env: str = "") -> dict:
    """POST body as JSON and return the decoded JSON object.

    timeout_s bounds each try; the whole call (tries and waits) ends by (max_retries + 1) * timeout_s.
    429, 5xx and connection errors are retried with exponential backoff, honouring Retry-After;
    after the last try ProviderUnavailable. Any other 4xx, or an answer that is not a JSON object,
    is ProviderError at once. key_env, when given, is named in the message of a 401/403.
    Header values (keys) never appear in a message.
    """
    data = json.dumps(body).encode("utf-8")
    deadline = time.monotonic() + timeout_s * (max_retries + 1)
    where = _where(url)
    last = ""
    for attempt in range(max_retries + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        req = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json",
                                              **headers})
        wait = BACKOFF_S * (2 ** attempt)
        try:
            with urllib.request.urlopen(req, timeout=min(timeout_s, left)) as resp:
                raw = resp.read()
            return _decode(raw, provider, where)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):  # without the server's words: some quote part of the key back
                named = f"check the key in ${key_env}" if key_env else "check its API key"
                raise ProviderError(f"{provider} at {where} refused the key (HTTP {exc.code}); {named}") from None
            detail = _detail(exc, headers)
            if exc.code not in RETRIED:
                raise ProviderError(f"{provider} at {where} refused the request (HTTP {exc.code}{detail}); "
                                    "check the model name and settings in [embedder]/[ranker]/[llm]") from None
            last = f"HTTP {exc.code}{detail}"
            wait = max(wait, _retry_after(exc.headers.get("Retry-After")))
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            last = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
        if attempt == max_retries:
            break
        wait = min(wait, MAX_WAIT_S, max(0.0, deadline - time.monotonic()))
        time.sleep(wait)
    raise ProviderUnavailable(f"{provider} at {where} did not answer after {max_retries + 1} tries ({last}); "
                              "start it or check base_url; notes stay searchable by full text")


def _decode(raw: bytes, provider: str, where: str) -> dict:
    try:
        out = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        out = None
    if not isinstance(out, dict):
        raise ProviderError(f"{provider} at {where} answered something that is not a JSON object; "
                            "check base_url points at the model server's API")
    return out


def _detail(exc: urllib.error.HTTPError, headers: dict) -> str:
    """The server's own short reason, if it gave one, with any header value it quotes (a key) cut out."""
    try:
        body = json.loads(exc.read() or b"null")
    except Exception:
        return ""
    err = body.get("error") if isinstance(body, dict) else None
    msg = err.get("message") if isinstance(err, dict) else err if isinstance(err, str) else None
    if not msg and isinstance(body, dict):
        msg = body.get("detail") or body.get("message")
    if not isinstance(msg, str) or not msg:
        return ""
    msg = " ".join(msg.split())
    for value in headers.values():
        secret = str(value).split()[-1] if str(value).split() else ""
        if len(secret) >= 8:
            msg = msg.replace(secret, "…")
    return ": " + msg[:160]


def _retry_after(value: str | None) -> float:
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return 0.0


def _where(url: str) -> str:
    """The URL without its query string (a key passed as ?key=… never reaches a message)."""
    return url.split("?", 1)[0]
