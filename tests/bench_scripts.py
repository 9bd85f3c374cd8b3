"""bench/ scripts as modules, for the tests that check them: loaded from their files, so bench/ stays off sys.path."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(name: str):
    """bench/<name>.py, loaded once per session as the module `bench_<name>`."""
    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before it runs: dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[key]
