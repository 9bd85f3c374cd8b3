"""`serve --http --allow-origin`: a browser page of another local program (SillyTavern's) may call the API with
the token; the preflight, the CORS headers on answers and refusals, and every other origin still refused."""

from __future__ import annotations

import http.client
import subprocess

import pytest

from cli_process import command
from polling import eventually
from http_daemon import serving

PAGE = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("cors"), "--allow-origin", PAGE + "/") as srv:
        yield srv


def raw(server, method: str, path: str, headers: dict, body: bytes | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_the_preflight_of_an_allowed_page_is_answered_without_the_token(server):
    status, headers, _ = raw(server, "OPTIONS", "/search", {
        "Origin": PAGE, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    assert status == 204
    assert headers["access-control-allow-origin"] == PAGE
    assert "authorization" in headers["access-control-allow-headers"]
    assert "POST" in headers["access-control-allow-methods"]


def test_an_allowed_page_writes_and_searches_with_the_token_and_reads_refusals(server):
    hdrs = {"Origin": PAGE, "Content-Type": "application/json", "Authorization": f"Bearer {server.token}"}
    body = b'{"messages": [{"role": "user", "content": "My cat Miso sleeps on the piano"}], "user_id": "Seraphina"}'
    status, headers, _ = raw(server, "POST", "/memories", hdrs, body)
    assert status == 200 and headers["access-control-allow-origin"] == PAGE

    def found():
        status, headers, data = raw(server, "POST", "/search", hdrs, b'{"query": "Miso piano", "user_id": "Seraphina"}')
        return status == 200 and b"Miso" in data and headers["access-control-allow-origin"] == PAGE
    assert eventually(found, timeout=30, every=0.2)
    status, headers, data = raw(server, "GET", "/memories", {"Origin": PAGE})
    assert status == 401 and headers["access-control-allow-origin"] == PAGE and b"token" in data


def test_other_pages_are_still_refused_and_get_no_cors_headers(server):
    hdrs = {"Origin": "http://127.0.0.1:9999", "Authorization": f"Bearer {server.token}"}
    status, headers, data = raw(server, "GET", "/memories", hdrs)
    assert status == 403 and b"--allow-origin http://127.0.0.1:9999" in data
    assert "access-control-allow-origin" not in headers
    status, headers, _ = raw(server, "OPTIONS", "/memories", {"Origin": "http://127.0.0.1:9999"})
    assert status == 403 and "access-control-allow-origin" not in headers


def test_a_bad_origin_or_one_without_http_is_refused_at_start(tmp_path):
    for args, words in ((["--http", "127.0.0.1:1", "--allow-origin", "127.0.0.1:8000"], "give the page's origin"),
                        (["--allow-origin", PAGE], "needs --http")):
        res = subprocess.run(command("--home", str(tmp_path), "serve", *args),
                             capture_output=True, text=True, timeout=60)
        assert res.returncode != 0 and words in res.stdout + res.stderr
