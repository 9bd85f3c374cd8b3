"""`mdmem` as a user runs it: a real process, offline, its output captured."""

import os
import subprocess
import sys


def mdmem(*args, env=None, cwd=None, input=None):
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "indexer", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, input=input, timeout=300)
