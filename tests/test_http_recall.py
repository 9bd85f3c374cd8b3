"""POST /v1/recall/: the recall block over HTTP is the one `mdmem recall` makes, inside the caller's space."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_process import command
from http_daemon import serving
from polling import eventually
from indexer.notes.textseg import count_tokens

JSON_DOC = Path(__file__).resolve().parents[1] / "docs" / "JSON.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("recall")
    (base / "home" / "team").mkdir(parents=True)  # shared notes: a workspace's own Markdown, outside every space
    (base / "home" / "team" / "lunch.md").write_text("# Team\n\n- The team lunch is every Thursday at the Thai "
                                                     "place on Rua Augusta.\n", encoding="utf-8")
    with serving(base) as srv:
        for who, said in (("alice", "I'm vegetarian and I never eat fish"), ("alice", "我对花生过敏。"),
                          ("alice", "My sister Mei lives in Lisbon"), ("bob", "I eat steak every Friday"),
                          ("main", "My sister Lena lives in Porto and teaches violin")):
            status, _ = srv.call("POST", "/v1/memories/", {"messages": [{"role": "user", "content": said}],
                                                            "user_id": who})
            assert status == 200
        assert eventually(lambda: "Thai" in srv.call("POST", "/v1/recall/", {"query": "team lunch", "shared": True,
                                                                             "user_id": "bob"})[1]["text"], 60)
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
    cli = subprocess.run(command("--home", str(server.home), "recall", ask["query"],
                          "--space", "alice", "--now", "2026-11-27", "--max-chars", "400", "--scope", "global",
                          "--json"), capture_output=True, text=True, env=server.env, timeout=120)
    assert status == 200 and cli.returncode == 0, cli.stderr
    assert "花生" in got["text"] and got["text"] == json.loads(cli.stdout)["text"]


def test_a_weak_question_is_helped_by_the_conversation_given_as_messages(server):
    context = [{"role": "user", "content": "My sister visited last week."},
               {"name": "Alice", "content": "She flew back to Portugal, to Lisbon."}]
    status, got = server.call("POST", "/v1/recall/", {"query": "and where does she live?", "user_id": "alice",
                                                      "context": context, "now": "2026-11-27"})
    assert status == 200, got
    assert "Lisbon" in got["text"]


def test_a_space_and_the_shared_notes_are_one_ranking(server):
    ask = {"query": "where is the team lunch?", "user_id": "alice", "now": "2026-11-27"}
    status, alone = server.call("POST", "/v1/recall/", ask)
    assert status == 200 and "Thai" not in alone["text"]
    status, got = server.call("POST", "/v1/recall/", {**ask, "shared": True})
    assert status == 200 and "Thai" in got["text"] and "steak" not in got["text"]
    lunch = next(m for m in got["memories"] if "Thai" in m["text"])
    assert lunch["space"] is None and lunch["uri"] == "team/lunch.md"
    status, own = server.call("POST", "/v1/recall/", {**ask, "query": "what does alice eat", "shared": True})
    assert status == 200 and "vegetarian" in own["text"] and "steak" not in own["text"]
    assert {m["space"] for m in own["memories"]} <= {"alice", None} and "alice" in {m["space"] for m in own["memories"]}


def test_search_takes_the_shared_notes_into_the_space_s_ranking(server):
    ask = {"query": "team lunch Thai place", "agent_id": "main"}
    status, alone = server.call("POST", "/search", ask)
    assert status == 200 and not any("Thai" in r["memory"] for r in alone["results"])
    status, both = server.call("POST", "/search", {**ask, "shared": True})
    lunch = next(r for r in both["results"] if "Thai" in r["memory"])
    assert status == 200 and "agent_id" not in lunch and lunch["uri"] == "team/lunch.md"
    assert all(r.get("agent_id") in ("main", None) for r in both["results"])


def test_several_spaces_in_one_call(server):
    ask = {"query": "who eats steak?", "now": "2026-11-27"}
    status, got = server.call("POST", "/v1/recall/", {**ask, "spaces": ["alice", "bob"]})
    assert status == 200 and "steak" in got["text"]
    assert all(m["space"] in ("alice", "bob") for m in got["memories"])
    status, alice = server.call("POST", "/v1/recall/", {**ask, "spaces": ["alice"]})
    assert status == 200 and "steak" not in alice["text"]


def test_the_answer_has_what_a_client_needs(server):
    status, got = server.call("POST", "/v1/recall/", {"query": "where does my sister live?", "agent_id": "main",
                                                      "shared": True, "now": "2026-11-27"})
    assert status == 200 and got["query_truncated"] is None and got["tier"] == "query"
    m = next(m for m in got["memories"] if "Porto" in m["text"])
    assert m["space"] == "main" and m["store"] == "global" and m["date"].startswith("20") and m["id"]
    assert m["uri"].startswith("spaces/main/") and m["start_line"] <= m["end_line"] and m["score"] > 0
    assert m["line"] in got["text"].split("\n")
    long = "tell me everything " * 300 + "where does my sister live?"
    status, cut = server.call("POST", "/v1/recall/", {"query": long, "agent_id": "main"})
    assert status == 200 and cut["query_truncated"]["chars"] == len(long.strip()) and "Porto" in cut["text"]


def test_a_budget_in_tokens_holds_the_block(server):
    ask = {"query": "where does my sister live?", "agent_id": "main", "shared": True}
    status, got = server.call("POST", "/v1/recall/", {**ask, "max_tokens": 60})
    assert status == 200 and "Porto" in got["text"] and count_tokens(got["text"]) <= 60
    status, got = server.call("POST", "/v1/recall/", {**ask, "max_tokens": 30})
    assert status == 400 and "max_tokens is below the smallest memory found" in got["detail"]


def test_the_documented_request_gets_the_documented_answer(server):
    doc = JSON_DOC.read_text(encoding="utf-8")
    section = doc.split("## `POST /v1/recall/`", 1)[1].split("\n## ", 1)[0]
    request, answer = (json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", section, re.S)[:2])
    status, got = server.call("POST", "/v1/recall/", {**request, "now": "2026-11-27"})
    assert status == 200, got
    assert set(answer) <= set(got) and "Porto" in got["text"]
    assert all(set(m) == set(answer["memories"][0]) for m in got["memories"])


@pytest.mark.parametrize("body, words", [
    ({"user_id": "alice"}, "query must be a string"),
    ({"query": "x", "user_id": "alice", "context": 5}, "context must be"),
    ({"query": "x", "user_id": "alice", "context": [{"role": "user"}]}, "context[0]"),
    ({"query": "x", "user_id": "alice", "max_chars": 3}, "max_chars"),
    ({"query": "x", "user_id": "*"}, "not served"),
    ({"query": "x", "spaces": "alice"}, "spaces must be a list"),
    ({"query": "x", "spaces": ["a/b"]}, "space"),
    ({"query": "x", "user_id": "alice", "shared": "yes"}, "shared must be true or false"),
    ({"query": "x", "max_tokens": 5}, "max_tokens"),
])
def test_bad_bodies_get_400_and_a_reason(server, body, words):
    status, got = server.call("POST", "/v1/recall/", body)
    assert status == 400 and words in got["detail"]


def test_the_token_is_needed(server):
    status, _ = server.call("POST", "/v1/recall/", {"query": "x"}, token=None)
    assert status == 401
