"""One version: the package's (indexer.__version__) is what pip, the SillyTavern manifests and OpenClaw's package say."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

import indexer

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent


def test_every_manifest_carries_the_package_version():
    found = {path: json.loads((REPO / path).read_text())["version"]
             for path in ("manifest.json", "integrations/sillytavern/manifest.json",
                          "integrations/openclaw/package.json")}
    assert found == {path: indexer.__version__ for path in found}


def test_the_installed_distribution_reads_its_version_from_the_package():
    assert 'dynamic = ["version"]' in (REPO / "pyproject.toml").read_text()
    assert metadata.version("mdmem") == indexer.__version__
