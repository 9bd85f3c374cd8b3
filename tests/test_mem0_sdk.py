"""mem0's own SDK (`mem0ai` MemoryClient and AsyncMemoryClient) against a real daemon on loopback, call by call."""

from __future__ import annotations

import asyncio
import importlib
import os

import pytest

from http_daemon import serving
from indexer.daemon.mem0_api import OVERFETCH
from indexer.index import db

TEA = ["I drink green tea every morning", "Tea with honey soothes my throat", "My favourite tea shop is downtown",
       "I brew oolong tea in a clay pot", "Iced tea is my summer drink", "I keep a tin of jasmine tea at work",
       "Mint tea after dinner helps me sleep", "I gave my sister a tea set for her birthday"]
# said once on a trip, in long sentences where tea is one word of many: they rank below every line above
TRIP = ["On the night train to the coast a stranger with a violin shared bread, olives and a flask of tea",
        "At the harbour market in the rain we bought smoked fish, wool socks, postcards and some tea for later"]
META = {"chat": "Alice - 2026-11-25@02h01m.jsonl", "time": "2026-11-25T02:01:37", "turn": 7, "角色": "塞拉菲娜"}


@pytest.fixture(scope="module")
def mem0(tmp_path_factory):
    """The mem0 package, with its config folder in a temporary place and its telemetry off (no network)."""
    saved = {k: os.environ.get(k) for k in ("MEM0_DIR", "MEM0_TELEMETRY")}
    os.environ.update(MEM0_DIR=str(tmp_path_factory.mktemp("mem0dir")), MEM0_TELEMETRY="False")
    try:
        return importlib.import_module("mem0")  # both are read once, when the package is imported
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("sdk")) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(mem0, server):
    c = mem0.MemoryClient(api_key=server.token, host=f"http://127.0.0.1:{server.port}")  # pings /v1/ping/
    yield c
    c.client.close()


def test_add_search_get_all_get_carry_metadata_and_keep_spaces_apart(client, server):
    turn = [{"role": "user", "content": "I'm allergic to peanuts, remember that."},
            {"role": "assistant", "content": "Noted: no peanuts for you."}]
    added = client.add(turn, user_id="alice", agent_id="Seraphina", metadata=META)
    assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]
    assert added["results"][0]["metadata"] == META
    client.add("I love peanut butter sandwiches", filters={"user_id": "bob"})  # ids inside filters, as v3 documents
    note = (server.home / "spaces/alice/journal").glob("*.md")
    text = next(note).read_text(encoding="utf-8")
    assert '**user:** I\'m allergic to peanuts, remember that.\n  - metadata: {"chat": "Alice' in text
    assert '"角色": "塞拉菲娜"' in text  # readable in the note as written, Chinese included

    found = client.search("peanut allergy", filters={"user_id": "alice"}, top_k=5)["results"]
    assert found and "allergic to peanuts" in found[0]["memory"] and found[0]["metadata"] == META
    assert found[0]["user_id"] == "alice" and all("butter" not in r["memory"] for r in found)
    both = client.search("peanut", filters={"AND": [{"user_id": "alice"}, {"agent_id": "Seraphina"}]})["results"]
    assert {r["id"] for r in both} == {r["id"] for r in added["results"]}
    assert not client.search("peanut", filters={"AND": [{"user_id": "alice"},
                                                        {"metadata": {"chat": "another.jsonl"}}]})["results"]
    same_chat = {"AND": [{"user_id": "alice"}, {"metadata": {"chat": META["chat"]}}]}
    assert len(client.search("peanut", filters=same_chat, top_k=2)["results"]) == 2
    assert client.search("peanut", filters={"user_id": "alice", "created_at": {"gte": "2000-01-01"}})["results"]
    assert not client.search("peanut", filters={"user_id": "alice", "created_at": {"lt": "2000-01-01"}})["results"]

    page = client.get_all(filters={"user_id": "alice"}, page=1, page_size=1)
    assert page["count"] == 2 and len(page["results"]) == 1 and page["next"] == 2
    listed = client.get_all(filters={"user_id": "alice"})
    assert sorted(r["memory"] for r in listed["results"]) == ["I'm allergic to peanuts, remember that.",
                                                             "Noted: no peanuts for you."]
    one = client.get(found[0]["id"])
    assert one["memory"] == "I'm allergic to peanuts, remember that." and one["metadata"] == META
    assert client.get_all(filters={"user_id": "bob"})["results"][0]["metadata"] is None


def test_update_history_delete_and_errors(mem0, client, server):
    mid = client.add("I live in Lisbon", user_id="carol", metadata={"source": "intro"})["results"][0]["id"]
    upd = client.update(mid, text="I live in Porto")
    assert upd["memory"] == "I live in Porto" and upd["metadata"] == {"source": "intro"}  # metadata kept
    client.update(mid, metadata={"source": "correction"})
    now = client.get(mid)  # the id the client holds keeps naming the memory
    assert now["memory"] == "I live in Porto" and now["metadata"] == {"source": "correction"}
    events = client.history(mid)
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "UPDATE"]
    assert events[1]["old_memory"] == "I live in Lisbon" and events[1]["new_memory"] == "I live in Porto"
    assert client.delete(mid)["message"].startswith("Memory deleted")
    assert "Porto" not in "".join(p.read_text() for p in (server.home / "spaces/carol").rglob("*.md"))
    with pytest.raises(mem0.exceptions.MemoryError) as lost:
        client.get(mid)
    assert "no memory with id" in str(lost.value)
    assert client.history(mid)[-1]["event"] == "DELETE"  # the old text is still told
    with pytest.raises(mem0.exceptions.MemoryError) as bad:
        client.search("x", filters={"categories": {"in": ["food"]}, "user_id": "alice"})
    assert "not served by mdmem" in str(bad.value)
    status, body = server.call("GET", "/v9/nothing/")
    assert status == 404 and "not served" in body["detail"]  # JSON, in mem0's error shape


def test_batch_users_delete_all_and_reset(client, server):
    ids = [r["id"] for r in client.add([{"role": "user", "content": "I play the cello"},
                                        {"role": "user", "content": "I collect old maps"}], user_id="dave")["results"]]
    client.batch_update([{"memory_id": ids[0], "text": "I play the viola"}])
    assert client.get(ids[0])["memory"] == "I play the viola"
    client.batch_delete([{"memory_id": ids[1]}])
    assert [r["memory"] for r in client.get_all(filters={"user_id": "dave"})["results"]] == ["I play the viola"]
    users = {u["name"]: u for u in client.users()["results"]}
    assert users["dave"]["total_memories"] == 1 and users["alice"]["total_memories"] == 2
    client.delete_all(user_id="bob")
    assert client.get_all(filters={"user_id": "bob"})["count"] == 0 and client.get_all(
        filters={"user_id": "alice"})["count"] == 2
    (server.home / "user").mkdir(exist_ok=True)
    (server.home / "user/own.md").write_text("# Mine\n\nA note of my own, outside every space.\n")
    client.reset()  # deletes every user the SDK lists, through /v2/entities/
    assert client.users()["results"] == [] and (server.home / "user/own.md").exists()


def test_the_async_client_makes_the_same_calls(mem0, server):
    async def flow():
        async with mem0.AsyncMemoryClient(api_key=server.token, host=f"http://127.0.0.1:{server.port}") as c:
            added = await c.add("我每天早上喝乌龙茶", user_id="wei", metadata={"chat": "茶.jsonl"})
            mid = added["results"][0]["id"]
            found = (await c.search("乌龙茶", filters={"user_id": "wei"}))["results"]
            listed = await c.get_all(filters={"user_id": "wei"})
            await c.update(mid, text="我每天早上喝绿茶")
            got = await c.get(mid)
            events = await c.history(mid)
            users = await c.users()
            gone = await c.delete(mid)
            return found, listed, got, events, users, gone

    found, listed, got, events, users, gone = asyncio.run(flow())
    assert found[0]["memory"] == "我每天早上喝乌龙茶" and found[0]["metadata"] == {"chat": "茶.jsonl"}
    assert listed["count"] == 1 and got["memory"] == "我每天早上喝绿茶"
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert "wei" in {u["name"] for u in users["results"]} and gone["message"].startswith("Memory deleted")


def test_a_wrong_key_fails_the_constructor_with_the_servers_reason(mem0, server):
    with pytest.raises(ValueError, match="wrong token"):
        mem0.MemoryClient(api_key="not-the-token", host=f"http://127.0.0.1:{server.port}")


def _access_counts(client, server) -> dict:
    """Every memory's access count once the writer has written those already handed to it (an add is a writer job
    queued behind them)."""
    client.add("I water the ferns on Sundays", user_id="flush")
    con = db.connect(server.home / "index.db", readonly=True)
    try:
        return {r["id"]: r["access_count"] for r in db.rows(con, "SELECT id, access_count FROM chunks")}
    finally:
        con.close()


def test_a_rare_metadata_filter_reads_down_the_ranking_and_counts_only_what_it_returns(client, server):
    client.add([{"role": "user", "content": t} for t in TEA], user_id="erin", metadata={"chat": "home.jsonl"})
    trip = {r["id"] for r in client.add([{"role": "user", "content": t} for t in TRIP], user_id="erin",
                                        metadata={"chat": "trip.jsonl"})["results"]}
    every = client.search("tea", filters={"user_id": "erin"}, top_k=50)["results"]
    assert len(every) == len(TEA) + len(TRIP) and not trip & {r["id"] for r in every[:OVERFETCH]}
    first_trip = next(r["id"] for r in every if r["id"] in trip)
    before = _access_counts(client, server)
    rare = {"AND": [{"user_id": "erin"}, {"metadata": {"chat": "trip.jsonl"}}]}
    got = client.search("tea", filters=rare, top_k=1)["results"]
    assert [r["id"] for r in got] == [first_trip] and got[0]["metadata"] == {"chat": "trip.jsonl"}
    after = _access_counts(client, server)
    assert {i: n - before.get(i, 0) for i, n in after.items() if n != before.get(i, 0)} == {first_trip: 1}
    both = client.search("tea", filters={**rare, "created_at": {"gte": "2000-01-01"}}, top_k=5)["results"]
    assert {r["id"] for r in both} == trip  # fewer meet the conditions than asked: every one that does
