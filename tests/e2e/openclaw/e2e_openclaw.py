"""OpenClaw with the mdmem memory plugin, for real: the `openclaw` CLI, a recording stub model, a real mdmem daemon.

The mdmem store root is OpenClaw's workspace, so MEMORY.md and memory/*.md are indexed where OpenClaw keeps them
and each agent's captured memories land in the workspace's spaces/<agent>/ notes.
Run by run.sh (which installs Node and openclaw): python e2e_openclaw.py   (OPENCLAW_BIN: the openclaw command)
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
PLUGIN = ROOT / "integrations" / "openclaw"
TURN_TIMEOUT_S = 180  # a cold turn took 38 s on 2 busy cores; a warm one 12 s
DAEMON_TIMEOUT_S = 120
HEADER = "Relevant long-term memory"  # the first words of the daemon's recall block
BOOTSTRAP_IGNORE = "# OpenClaw loads these into every prompt itself; mdmem indexes MEMORY.md, memory/ and spaces/\n" \
                   "/*.md\n!/MEMORY.md\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"ok - {what}", flush=True)


class Run:
    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.home = scratch / "home"
        self.state = self.home / ".openclaw"
        self.ws = self.state / "workspace"
        self.record = scratch / "prompts.jsonl"
        self.model_port, self.mdmem_port = free_port(), free_port()
        self.procs: list[subprocess.Popen] = []
        self.daemon: subprocess.Popen | None = None
        self.turns = 0
        self.env = {**os.environ, "HOME": str(self.home), "OPENCLAW_NO_ONBOARD": "1", "NO_COLOR": "1",
                    "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        self.env.pop("MDMEM_HOME", None)
        self.env.pop("MDMEM_PROJECT", None)

    # -- processes -----------------------------------------------------------------------------
    def start_model(self) -> None:
        log = open(self.scratch / "stub.log", "w")
        self.procs.append(subprocess.Popen([sys.executable, str(HERE / "tool_stub.py"), str(self.model_port),
                                            str(self.record)], stdout=log, stderr=log))
        self.wait_http(f"http://127.0.0.1:{self.model_port}/v1/models", 30)

    def start_mdmem(self) -> None:
        log = open(self.scratch / "mdmem.log", "a")
        self.daemon = subprocess.Popen([sys.executable, "-m", "indexer", "--home", str(self.ws), "serve", "--http",
                                        f"127.0.0.1:{self.mdmem_port}"], stdout=log, stderr=log, env=self.env,
                                       cwd=self.scratch)
        self.procs.append(self.daemon)
        self.wait_http(f"http://127.0.0.1:{self.mdmem_port}/memories", DAEMON_TIMEOUT_S, self.daemon)

    def stop_mdmem(self) -> None:
        self.daemon.terminate()
        self.daemon.wait(30)

    def wait_http(self, url: str, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{proc.args[:4]} exited with {proc.returncode}; see {self.scratch}")
            try:
                urllib.request.urlopen(url, timeout=2)
                return
            except urllib.error.HTTPError:
                return  # it answered (401 without a token is an answer)
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"nothing answered at {url} within {timeout_s} s")

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    # -- openclaw --------------------------------------------------------------------------------
    def openclaw(self, *args: str, timeout: float = TURN_TIMEOUT_S) -> subprocess.CompletedProcess:
        cmd = [os.environ.get("OPENCLAW_BIN", "openclaw"), *args]
        res = subprocess.run(cmd, env=self.env, cwd=self.scratch, capture_output=True, text=True, timeout=timeout)
        with open(self.scratch / "openclaw.log", "a") as f:
            f.write(f"$ {' '.join(args)}\n{res.stderr}\n")
        if res.returncode != 0:
            raise RuntimeError(f"openclaw {' '.join(args[:2])} exited {res.returncode}: {res.stderr[-2000:]}")
        return res

    def log_of_turn(self) -> str:
        """What OpenClaw logged during the latest command."""
        return (self.scratch / "openclaw.log").read_text().rsplit("\n$ ", 1)[-1]

    def config(self) -> dict:
        return json.loads((self.state / "openclaw.json").read_text())

    def write_config(self, cfg: dict) -> None:
        (self.state / "openclaw.json").write_text(json.dumps(cfg, indent=2))

    def setup_openclaw(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        self.write_config({
            "models": {"mode": "replace", "providers": {"stub": {
                "baseUrl": f"http://127.0.0.1:{self.model_port}/v1", "apiKey": "stub-key", "api": "openai-completions",
                "models": [{"id": "stub-model", "name": "stub", "input": ["text"], "contextWindow": 32000,
                            "maxTokens": 1024}]}}},
            "agents": {"defaults": {"model": {"primary": "stub/stub-model"}, "workspace": str(self.ws)}},
        })
        self.openclaw("plugins", "install", "--link", str(PLUGIN), "--force", "--accept-capabilities", timeout=300)
        cfg = self.config()
        check(cfg["plugins"]["slots"]["memory"] == "mdmem", "installing the plugin selects it for the memory slot")
        cfg["plugins"]["entries"]["mdmem"].update({
            "config": {"baseUrl": f"http://127.0.0.1:{self.mdmem_port}", "tokenFile": str(self.ws / ".http-token")},
            "hooks": {"allowConversationAccess": True}})
        self.write_config(cfg)

    def turn(self, message: str) -> dict:
        """One turn in a session of its own: what a later turn knows came from memory, not from the history."""
        self.turns += 1
        res = self.openclaw("agent", "--local", "--agent", "main", "--session-id", f"e2e-{self.turns}",
                            "--message", message, "--json")
        return json.loads(res.stdout)

    # -- what the model saw ----------------------------------------------------------------------
    def requests(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line)["body"] for line in self.record.read_text().splitlines() if line.strip()]

    def prompt_text(self, body: dict) -> str:
        return "\n".join(content_text(m.get("content")) for m in body.get("messages", []))

    def recalled(self, body: dict) -> str:
        """The memory block the plugin put before the user's message of this request ("" when none)."""
        said = [content_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"]
        said = [t for t in said if not t.lstrip().startswith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>")]
        last = said[-1] if said else ""
        start = last.find(HEADER)  # the daemon's block, as the plugin injects it: up to the first blank line
        return last[start:].split("\n\n", 1)[0] if start >= 0 else ""

    def call(self, tool: str, args: dict) -> dict:
        """Have the model call a tool in a turn; what the tool returned, as OpenClaw handed it to the model."""
        n = len(self.requests())
        self.turn(f"CALL {tool} {json.dumps(args, ensure_ascii=False)}")
        for body in self.requests()[n:]:
            for m in body.get("messages", []):
                if m.get("role") != "tool":
                    continue
                wrapped = json.loads(content_text(m.get("content")))
                if wrapped.get("tool", {}).get("name") == tool:
                    return json.loads(wrapped["result"]["content"][0]["text"])
        raise AssertionError(f"the model's call of {tool} brought no result back; see {self.record}")

    def agent_notes(self) -> str:
        """The main agent's notes, without the captured `CALL ...` lines that only drive the stub."""
        text = "\n".join(p.read_text() for p in sorted((self.ws / "spaces" / "main").rglob("*.md")))
        return "\n".join(line for line in text.splitlines() if "CALL " not in line)


def content_text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def reply_of(result: dict) -> str:
    meta = result.get("meta") or result.get("result", {}).get("meta") or {}
    text = meta.get("finalAssistantVisibleText")
    if text is None:
        text = json.dumps(result, ensure_ascii=False)
    return text


def scenario(r: Run) -> None:
    r.ws.mkdir(parents=True)
    (r.ws / "memory").mkdir()
    (r.ws / "MEMORY.md").write_text("# Long-term memory\n\n- The user's cat is called Mochi.\n")
    (r.ws / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n\n- 用户下个月要去成都出差，住在春熙路附近。\n")
    (r.ws / ".mdmemignore").write_text(BOOTSTRAP_IGNORE)
    r.start_model()
    r.start_mdmem()
    r.setup_openclaw()

    # 1. a fact told in one turn is in the agent's Markdown
    r.turn("Please remember this: my sister Lena lives in Porto and teaches violin.")
    check("Lena lives in Porto" in r.agent_notes(), "the told fact is in spaces/main/ of the workspace's notes")
    first = r.requests()[0]
    check("memory_search (mdmem)" in r.prompt_text(first) and "memory_store (mdmem)" in r.prompt_text(first),
          "the model is offered mdmem's memory_search and memory_store, not memory-core's")
    system = content_text(first["messages"][0].get("content"))
    check("memory_get reads one hit by its id" in system and "pull only the needed lines" not in system,
          "the system prompt's memory section is mdmem's, not memory-core's")

    # 2. a later turn's prompt holds it (auto-recall before the prompt is built)
    n = len(r.requests())
    r.turn("Where does my sister live?")
    block = r.recalled(r.requests()[n])
    check("Porto" in block, "a later turn's prompt (a new session) holds the recalled fact")
    check(all(line.startswith("- ") and "(source: " in line for line in block.splitlines()[1:])
          and "<mdmem-memory>" not in r.prompt_text(r.requests()[n]),
          "the block is the daemon's as it came: its header, then one cited line per memory")

    # 3. Chinese: told in one turn, recalled by a Chinese question in the next; and OpenClaw's own memory/ notes
    r.turn("记住：我女儿下周三在杭州参加钢琴比赛。")
    check("杭州参加钢琴比赛" in r.agent_notes(), "a Chinese fact is captured into the agent's notes")
    n = len(r.requests())
    r.turn("我女儿的比赛在哪个城市？")
    check("杭州" in r.recalled(r.requests()[n]), "a Chinese question recalls the Chinese memory")
    n = len(r.requests())
    r.turn("我出差的时候住在哪里？")
    block = r.recalled(r.requests()[n])
    check("春熙路" in block and "memory/2026-11-20.md" in block,
          "a Chinese question finds OpenClaw's own memory/2026-11-20.md note")

    # 4. the tools, called by the model through OpenClaw (what each returned is read where the model got it)
    found = r.call("memory_search", {"query": "What is my cat called?", "maxResults": 10})
    check(any("Mochi" in h["text"] and h["path"] == "MEMORY.md" for h in found["results"]),
          "memory_search finds OpenClaw's own MEMORY.md")
    check(r.call("memory_store", {"text": "Prefers oolong tea in the afternoon"})["status"] == "ok"
          and "Prefers oolong tea in the afternoon" in r.agent_notes(), "memory_store writes the agent's note")
    found = r.call("memory_search", {"query": "乌龙茶 oolong tea"})
    tea = next(h for h in found["results"] if "oolong" in h["text"])
    got = r.call("memory_get", {"id": tea["id"]})
    check(got["status"] == "ok" and "oolong" in got["memory"]["text"], "memory_get reads the memory by its id")
    gone = r.call("memory_forget", {"memoryId": tea["id"]})
    check(gone.get("removed") == tea["id"] and "Prefers oolong tea" not in r.agent_notes(),
          "memory_forget removes the memory from the agent's note")

    check("plugin tool name conflict (memory-core): memory_search" in r.log_of_turn(),
          "with memory-core on, OpenClaw logs that memory-core's memory_search lost to mdmem's")

    # 5. mdmem down: the turn still runs, quietly, within its deadline (and memory-core off ends the conflict)
    cfg = r.config()
    cfg["plugins"]["entries"]["memory-core"] = {"enabled": False}
    r.write_config(cfg)
    r.stop_mdmem()
    started = time.monotonic()
    out = reply_of(r.turn("Where does my sister live?"))
    took = time.monotonic() - started
    check(out == "I will remember that.", f"with mdmem stopped the turn still answers ({took:.0f} s)")
    told = [line for line in r.log_of_turn().splitlines() if "mdmem: " in line and "skipped" in line]
    check(len(told) == 1 and "not reachable" in told[0],
          f"recall and capture failing alike give one warning, not one each ({len(told)})")
    check("plugin tool name conflict" not in r.log_of_turn(), "with memory-core off no tool name conflict is logged")
    check("memory_search (mdmem)" in r.prompt_text(r.requests()[-1]), "and mdmem's tools are still offered")
    check("Lena lives in Porto" in r.agent_notes(), "the notes are untouched while mdmem is down")


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="mdmem-openclaw-"))
    r = Run(scratch)
    try:
        scenario(r)
    except Exception:
        print(f"openclaw e2e failed; logs kept in {scratch}", file=sys.stderr)
        raise
    finally:
        r.close()
    shutil.rmtree(scratch, ignore_errors=True)
    print("openclaw e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
