"""`mdmem` as a user runs it: a real process, offline, its output captured; the one way tests start the CLI."""

import os
import subprocess
import sys


def command(*args: str) -> list[str]:
    """The argv of `mdmem ARGS` run by this interpreter (for Popen and MCP stdio servers)."""
    return [sys.executable, "-m", "indexer", *args]


def offline_env(env: dict | None = None, base_env: dict | None = None) -> dict:
    """base_env (this process's environment by default), offline, with env's variables on top."""
    return {**(os.environ if base_env is None else base_env), "HF_HUB_OFFLINE": "1", **(env or {})}


def mdmem(*args, env=None, cwd=None, input=None, base_env=None, timeout=300, check=False, **popen):
    """Run `mdmem ARGS` to its end. env: variables added to base_env (this process's environment unless
    given); popen: more of subprocess.run's arguments (preexec_fn, ...)."""
    return subprocess.run(command(*args), capture_output=True, text=True, env=offline_env(env, base_env), cwd=cwd,
                          input=input, timeout=timeout, check=check, **popen)
