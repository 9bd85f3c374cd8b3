"""Every relative link in README.md and docs/*.md leads to a file that exists, and its #anchor to a heading there."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def links(text: str) -> list[str]:
    """Link targets outside code blocks and inline code, as a reader's browser would follow them."""
    return LINK.findall(CODE.sub("", FENCE.sub("", text)))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (letters of any script kept), spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+?)\s*#*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken(doc: Path) -> list[str]:
    out = []
    for target in links(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not this repository's
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            out.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{target} (no heading #{anchor} in {dest.name})")
    return out


def test_the_slug_is_githubs():
    assert slug("Time words (`bench/time_window.py`, also `tests/test_time_window.py`)") == \
        "time-words-benchtime_windowpy-also-teststest_time_windowpy"
    assert slug("MCP (stdio)") == "mcp-stdio"
    assert slug("中文 search: 北京") == "中文-search-北京"


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "A.md").write_text("# Top\n\n## Two words\n", encoding="utf-8")
    doc = tmp_path / "B.md"
    doc.write_text("[ok](A.md#two-words) [gone](C.md) [bad anchor](A.md#three) `[code](D.md)` [web](https://x.y/z)\n"
                   "```\n[in a block](E.md)\n```\n", encoding="utf-8")
    assert broken(doc) == ["C.md (no such file)", "A.md#three (no heading #three in A.md)"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_resolves(doc):
    assert not broken(doc)


def test_the_readme_is_a_front_door():
    """Short enough to read first; every guide it names is linked from it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024
    for guide in ("DAEMON", "CONFIGURATION", "INTEGRATIONS", "PYTHON", "BENCHMARKS", "ARCHITECTURE", "RELIABILITY"):
        assert f"(docs/{guide}.md" in text, guide


def named_paths(text: str) -> list[str]:
    """Repository paths a document names in inline code (`indexer/cli/backend.py`), outputs of runs left out."""
    found = re.findall(r"`((?:indexer|tests|bench|docs|integrations|systemd|memory_samples)/[^`\s:#<>*]*)", text)
    return [p.rstrip("/.,") for p in found if not p.startswith(("bench/out/", "bench/.peers/"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_document_names_exists(doc):
    assert not [p for p in named_paths(doc.read_text(encoding="utf-8")) if not (REPO / p).exists()]


def test_a_path_gone_is_found():
    assert named_paths("see `indexer/cli/backend.py` and `bench/no_such_script.py`, writes `bench/out/x.json`") == \
        ["indexer/cli/backend.py", "bench/no_such_script.py"]
    assert not (REPO / "bench/no_such_script.py").exists()
