"""The JS clients' own tests (the SillyTavern extension's and the OpenClaw plugin's), run by node: Node's built-ins
only, nothing to install; a fake daemon on loopback stands in for mdmem where the error rule is tested."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs): the JS clients' tests need it")
@pytest.mark.parametrize("suite", ["integrations/sillytavern/test/memory.test.mjs",
                                   "integrations/openclaw/test/plugin.test.mjs"])
def test_each_client_passes_its_own_tests(suite):
    done = subprocess.run([NODE, "--test", "--test-reporter=tap", suite], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
