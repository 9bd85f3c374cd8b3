"""POST /v1/recall/: the recall block over HTTP is the one `mdmem recall` makes, inside the caller's space."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from http_daemon import serving


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("recall")) as srv:
        for who, said in (("alice", "I'm vegetarian and I never eat fish"), ("alice", "我对花生过敏。"),
                          ("alice", "My sister Mei lives in Lisbon"), ("bob", "I eat steak every Friday")):
            status, _ = srv.call("POST", "/v1/memories/", {"messages": [{"role": "user", "content": said}],
                                                            "user_id": who})
            assert status == 200
        yield srv


def test_the_block_holds_the_space_s_answer_and_nothing_of_another_space(server):
    status, got = server.call("POST", "/v1/recall/", {"query": "what does alice eat", "user_id": "alice",
                                                      "now": "2026-11-27"})
    assert status == 200, got
    assert "vegetarian" in got["text"] and "steak" not in got["text"]
    assert got["tier"] == "query" and got["memories"] and all("steak" not in m["line"] for m in got["memories"])


def test_http_gives_the_same_block_as_the_command_line(server):
    ask = {"query": "我对什么过敏？", "user_id": "alice", "now": "2026-11-27", "max_chars": 400}
    status, got = server.call("POST", "/v1/recall", ask)
    cli = subprocess.run([sys.executable, "-m", "indexer", "--home", str(server.home), "recall", ask["query"],
                          "--space", "alice", "--now", "2026-11-27", "--max-chars", "400", "--scope", "global",
                          "--json"], capture_output=True, text=True, env=server.env, timeout=120)
    assert status == 200 and cli.returncode == 0, cli.stderr
    assert "花生" in got["text"] and got["text"] == json.loads(cli.stdout)["text"]


def test_a_weak_question_is_helped_by_the_conversation_given_as_messages(server):
    context = [{"role": "user", "content": "My sister visited last week."},
               {"name": "Alice", "content": "She flew back to Portugal, to Lisbon."}]
    status, got = server.call("POST", "/v1/recall/", {"query": "and where does she live?", "user_id": "alice",
                                                      "context": context, "now": "2026-11-27"})
    assert status == 200, got
    assert "Lisbon" in got["text"]


@pytest.mark.parametrize("body, words", [
    ({"user_id": "alice"}, "query must be a string"),
    ({"query": "x", "user_id": "alice", "context": 5}, "context must be"),
    ({"query": "x", "user_id": "alice", "context": [{"role": "user"}]}, "context[0]"),
    ({"query": "x", "user_id": "alice", "max_chars": 3}, "max_chars"),
    ({"query": "x", "user_id": "*"}, "not served"),
])
def test_bad_bodies_get_400_and_a_reason(server, body, words):
    status, got = server.call("POST", "/v1/recall/", body)
    assert status == 400 and words in got["detail"]


def test_the_token_is_needed(server):
    status, _ = server.call("POST", "/v1/recall/", {"query": "x"}, token=None)
    assert status == 401
