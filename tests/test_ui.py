"""The memory browser over real HTTP: the one-time login link, the session cookie, CSRF, the page's files."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_process import command
from http_daemon import free_port, serving
from polling import eventually

from indexer.daemon import ui_auth

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("ui")) as srv:
        yield srv


def raw(srv, method: str, path: str, body=None, headers=None):
    """One request with no token: (status, headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(),
                     headers={"Host": f"127.0.0.1:{srv.port}", **({"Content-Type": "application/json"} if body
                                                                   is not None else {}), **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def login_path(srv) -> str:
    status, made = srv.call("POST", "/v1/ui/link")
    assert status == 200 and made["expires_in"] == 60
    assert made["url"].startswith(f"http://127.0.0.1:{srv.port}/ui/login?code=")
    return made["url"].split(str(srv.port), 1)[1]


def session(srv) -> tuple[str, str]:
    """A logged-in page's cookie header and CSRF value."""
    status, headers, _ = raw(srv, "GET", login_path(srv))
    assert status == 303
    cookie = headers["set-cookie"].split(";")[0]
    status, _, body = raw(srv, "GET", "/ui/session", headers={"Cookie": cookie})
    assert status == 200
    return cookie, json.loads(body)["csrf"]


def test_the_login_link_works_once_and_sets_a_strict_http_only_cookie(server):
    path = login_path(server)
    status, headers, _ = raw(server, "GET", path)
    assert status == 303 and headers["location"] == "/ui/"
    cookie = headers["set-cookie"].lower()
    assert cookie.startswith(f"{ui_auth.COOKIE}_{server.port}=")  # cookies ignore ports: each daemon its own
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    status, headers, body = raw(server, "GET", path)  # the same link again: spent
    assert status == 401 and "set-cookie" not in headers and b"mdmem ui" in body
    status, headers, _ = raw(server, "GET", "/ui/login?code=not-a-code")
    assert status == 401 and "set-cookie" not in headers
    assert raw(server, "GET", "/ui/login")[0] == 401


def test_codes_and_sessions_expire_and_live_in_memory_only():
    now = [1000.0]
    sessions = ui_auth.UiSessions(clock=lambda: now[0])
    late = sessions.new_code()
    now[0] += ui_auth.CODE_TTL_S + 1
    assert sessions.redeem(late) is None
    fresh = sessions.new_code()
    assert ui_auth.UiSessions().redeem(fresh) is None  # another daemon (a restart) knows no code of this one
    secret = sessions.redeem(fresh)
    page = {"host": "127.0.0.1:8765", "cookie": f"other=1; {ui_auth.COOKIE}_8765={secret}"}
    assert sessions.csrf(page) and sessions.admit("GET", "/v1/ui/status", page) is None
    assert sessions.csrf({**page, "host": "127.0.0.1:9000"}) is None  # another port's daemon reads its own cookie
    now[0] += ui_auth.SESSION_TTL_S + 1
    assert sessions.csrf(page) is None and sessions.admit("GET", "/v1/ui/status", page)[0] == 401


def test_without_the_cookie_the_api_is_refused_and_with_it_reads_work(server):
    assert raw(server, "GET", "/v1/ui/status")[0] == 401
    assert raw(server, "GET", "/ui/session")[0] == 401
    assert raw(server, "GET", "/v1/ui/status", headers={"Cookie": f"{ui_auth.COOKIE}_{server.port}=forged"})[0] == 401
    cookie, csrf = session(server)
    (server.home / "broken.md").write_bytes(b"valid start \xed\xa0\x80 not text")  # the daemon's watcher skips it

    def health():
        status, _, body = raw(server, "GET", "/v1/ui/status", headers={"Cookie": cookie})
        assert status == 200
        return json.loads(body)["stores"]["global"]
    assert {"files", "chunks", "pending", "skipped"} <= set(health())
    assert eventually(lambda: "not UTF-8" in health()["skipped_notes"].get("broken.md", ""), timeout=30)
    assert len(csrf) >= 16
    # the cookie is the page's way in, not a token: it mints no login link and does not speak MCP
    assert raw(server, "POST", "/v1/ui/link", {}, headers={"Cookie": cookie, "X-Mdmem-CSRF": csrf})[0] == 401
    assert raw(server, "POST", "/mcp", {}, headers={"Cookie": cookie, "X-Mdmem-CSRF": csrf})[0] == 401


def test_a_change_without_the_csrf_header_is_refused(server):
    cookie, csrf = session(server)
    add = {"messages": [{"role": "user", "content": "I keep bees on the roof"}], "user_id": "carol"}
    status, _, body = raw(server, "POST", "/memories", add, headers={"Cookie": cookie})
    assert status == 403 and b"x-mdmem-csrf" in body
    assert raw(server, "POST", "/memories", add, headers={"Cookie": cookie, "X-Mdmem-CSRF": "wrong"})[0] == 403
    _, listed = server.call("POST", "/v1/ui/memories", {"space": "carol"})
    assert listed["results"] == []  # nothing refused was written
    status, _, body = raw(server, "POST", "/memories", add, headers={"Cookie": cookie, "X-Mdmem-CSRF": csrf})
    assert status == 200 and json.loads(body)["results"][0]["event"] == "ADD"


def test_the_page_files_are_served_with_a_restrictive_policy(server):
    for path, kind in (("/ui/", "text/html"), ("/ui/app.js", "text/javascript"), ("/ui/app.css", "text/css")):
        status, headers, body = raw(server, "GET", path)
        assert status == 200 and headers["content-type"].startswith(kind) and body
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    for outside in ("/ui/../.http-token", "/ui/%2e%2e/.http-token", "/ui/serve.log"):
        status, _, body = raw(server, "GET", outside)
        assert status in (401, 404) and server.token.encode() not in body
    status, headers, _ = raw(server, "GET", "/")
    assert status == 303 and headers["location"] == "/ui/"


def test_a_script_memory_comes_back_as_text_and_the_page_never_writes_html(server):
    cookie, csrf = session(server)
    page = {"Cookie": cookie, "X-Mdmem-CSRF": csrf}
    add = {"messages": [{"role": "user", "content": SCRIPT}], "user_id": "mallory"}
    assert raw(server, "POST", "/memories", add, headers=page)[0] == 200

    def listed():
        status, headers, body = raw(server, "POST", "/v1/ui/memories", {"space": "mallory"}, headers=page)
        assert status == 200 and headers["content-type"] == "application/json"
        return json.loads(body)["results"]
    assert eventually(listed, timeout=30)
    memory = listed()[0]
    assert SCRIPT in memory["text"] and {"strength", "access_count", "reinforcement", "date"} <= set(memory)
    js = (Path(__file__).parent.parent / "indexer/daemon/ui/app.js").read_text()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "document.write" not in js


def test_edit_forget_and_undo_from_the_page_change_the_note(server):
    cookie, csrf = session(server)
    page = {"Cookie": cookie, "X-Mdmem-CSRF": csrf}
    add = {"messages": [{"role": "user", "content": "Dana's cat is called Miso"}], "user_id": "dana"}
    rid = json.loads(raw(server, "POST", "/memories", add, headers=page)[2])["results"][0]["id"]
    note = next((server.home / "spaces" / "dana").rglob("*.md"))
    status, _, _ = raw(server, "PUT", f"/v1/memories/{rid}/", {"text": "Dana's cat is called Tofu"}, headers=page)
    assert status == 200 and "Tofu" in note.read_text()
    assert raw(server, "DELETE", f"/v1/memories/{rid}/", headers={"Cookie": cookie})[0] == 403
    assert raw(server, "DELETE", f"/v1/memories/{rid}/", headers=page)[0] == 200
    assert "Tofu" not in note.read_text()
    assert raw(server, "POST", f"/v1/memories/{rid}/restore/", {}, headers=page)[0] == 200
    assert "Tofu" in note.read_text()
    for _ in range(2):
        status, _, body = raw(server, "POST", "/v1/ui/search", {"query": "Dana cat", "space": "dana"}, headers=page)
        assert status == 200 and "explain" in json.loads(body)["results"][0]
    # an agent's search counts as an access; the page's two above do not (the writer applies them in order)
    assert server.call("POST", "/search", {"query": "Dana cat", "filters": {"user_id": "dana"}})[0] == 200

    def recalled():
        return server.call("POST", "/v1/ui/memories", {"space": "dana"})[1]["results"][0]["access_count"]
    assert eventually(lambda: recalled() > 0, timeout=30) and recalled() == 1


def test_mdmem_ui_prints_a_link_that_logs_in(server):
    out = subprocess.run(command("--home", str(server.home), "ui", "--no-browser",
                          "--http", f"127.0.0.1:{server.port}"), env=server.env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    assert raw(server, "GET", url.split(str(server.port), 1)[1])[0] == 303


def test_mdmem_ui_without_a_daemon_says_how_to_start_one(tmp_path):
    port, env = free_port(), {**os.environ, "HF_HUB_OFFLINE": "1"}
    home = ["--home", str(tmp_path / "home")]
    subprocess.run(command(*home, "init"), env=env, check=True, capture_output=True)
    out = subprocess.run(command(*home, "ui", "--no-browser", "--http",
                          f"127.0.0.1:{port}"), env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and out.stdout == ""
    assert f"mdmem start --http 127.0.0.1:{port}" in out.stderr and len(out.stderr.strip().splitlines()) == 1
