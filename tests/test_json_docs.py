"""Every `--json` documented in docs/JSON.md prints one versioned object of the documented shape."""

import json
import os
import re
import subprocess
from pathlib import Path

from cli_process import command
from conftest import write_notes

DOC = Path(__file__).resolve().parents[1] / "docs" / "JSON.md"
PLACEHOLDERS = {"QUERY": "coffee", "TEXT": "I like green tea", "FILE": "-", "REF": "user/preferences.md:7-7"}
NEEDS_STATE = ("ID", "PATH")  # commands on a memory id or an import file: covered by the two checks below
BATCH = '{"qid": "q1", "query": "coffee"}\n{"qid": "q2", "query": "coffee", "limit": 0}\n'


def documented() -> list[tuple[list[str], str]]:
    """(argv, first field after version) per `## \\`mdmem …\\`` heading and its first example."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^## `mdmem ([^`]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        if any(w in NEEDS_STATE for w in m.group(1).split()):
            continue
        argv = [PLACEHOLDERS.get(w, w) for w in m.group(1).split()]
        example = re.search(r'```json\n\{"version": 1, "(\w+)"', m.group(2))
        out.append((argv, example.group(1) if example else ""))
    return out


def test_every_documented_json_command_prints_a_versioned_object(tmp_path):
    commands = documented()
    assert len(commands) >= 11 and all(key for _argv, key in commands)
    home = tmp_path / "home"
    write_notes(home, {"user/preferences.md": "---\ntype: preference\n---\n\n# Preferences\n\n"
                                              "- 2025-01-05: I prefer my coffee black.\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(home), "--embedder", "none")
    subprocess.run(base + ["index"], env=env, check=True, capture_output=True, timeout=120)
    for argv, key in commands:
        r = subprocess.run(base + argv, input=BATCH if "--batch" in argv else None, capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, (argv, r.stderr)
        lines = r.stdout.splitlines()
        assert lines and (len(lines) == 1 or "--batch" in argv), (argv, r.stdout)
        for line in lines:
            obj = json.loads(line)
            assert list(obj)[0] == "version" and obj["version"] == 1, (argv, line)
            assert key in obj, (argv, key, line)
            if "stores" in obj:
                assert list(obj["stores"]) == ["global"]
        if "--batch" in argv:  # a bad line is answered in the same shape, with its error
            assert [json.loads(line).get("error") is not None for line in lines] == [False, True]


def test_explain_is_a_rounded_table_on_a_terminal_and_complete_in_json(tmp_path):
    home = tmp_path / "home"
    write_notes(home, {"a.md": "# Coffee\n\nI prefer my coffee black, without sugar.\n",
                       "b.md": "# Tea\n\nGreen tea in the afternoon, coffee never after 3pm.\n"})
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(home), "--embedder", "none", "search", "coffee", "--explain")
    subprocess.run(base[:7] + ["index"], env=env, check=True, capture_output=True, timeout=120)
    text = subprocess.run(base, capture_output=True, text=True, env=env, timeout=120).stdout
    full = json.loads(subprocess.run(base + ["--json"], capture_output=True, text=True, env=env, timeout=120).stdout)
    assert "{" not in text and re.search(r"^\s*#\s+score\s+relev\s+bm25", text, re.M)
    numbers = re.findall(r"\d+\.\d+", text)
    assert numbers and all(len(n.split(".")[1]) == 3 for n in numbers)
    explain = full["results"][0]["explain"]
    assert {"mode", "bm25", "cosine", "fts_rank", "relevance", "strength", "dynamics"} <= set(explain)


def test_every_json_option_is_documented_and_printed_through_the_envelope():
    from indexer.cli.main import cli
    documented_names = set(re.findall(r"^## `mdmem (\S+)", DOC.read_text(encoding="utf-8"), re.M))
    with_json = {name for name, cmd in cli.commands.items() if any(p.name == "as_json" for p in cmd.params)}
    assert with_json and not with_json - documented_names, "document these in docs/JSON.md"
    cli_dir = Path(__file__).resolve().parents[1] / "indexer" / "cli"
    printers = [p.name for p in cli_dir.glob("*.py") if "json.dumps" in p.read_text(encoding="utf-8")]
    assert printers == ["output.py"], "print JSON with output.emit, which adds the version"
