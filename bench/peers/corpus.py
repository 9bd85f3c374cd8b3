"""Build or reuse the shared Markdown corpus and describe it (files, size, manifest id)."""
import hashlib
import shutil
import subprocess
from pathlib import Path

from common import DEFAULT_EDIT_REL, SHARED

QUICK_FILES = 30


def files(corpus):
    return sorted(p.relative_to(corpus).as_posix() for p in Path(corpus).rglob("*") if p.is_file())


def manifest_id(pairs):
    """Same id as make_corpus.sh prints, so a rebuilt corpus can be checked against the reference."""
    return hashlib.sha1("".join(f"{r}:{n}\n" for r, n in pairs).encode()).hexdigest()[:12]


def reference_id():
    ref = SHARED / "corpus.manifest"
    if not ref.exists():
        return None
    pairs = [(r, int(n)) for n, r in (line.split("\t") for line in ref.read_text().splitlines() if line)]
    return manifest_id(pairs)


def ensure(corpus):
    corpus = Path(corpus)
    if not (corpus.is_dir() and any(corpus.iterdir())):
        corpus.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["bash", SHARED / "make_corpus.sh", corpus], check=True)
    return corpus


def quick(full, dest):
    """The first QUICK_FILES files of the corpus (path order): a smoke-test corpus rebuilt each run."""
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    for rel in files(full)[:QUICK_FILES]:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(full) / rel, dest / rel)
    return dest


def describe(corpus):
    rels = files(corpus)
    pairs = [(r, (Path(corpus) / r).stat().st_size) for r in rels]
    mid, ref = manifest_id(pairs), reference_id()
    return {"files": len(rels), "bytes": sum(n for _, n in pairs), "manifest_id": mid,
            "reference_manifest_id": ref, "matches_reference": mid == ref}


def edit_file(corpus):
    """lib.sh's rule: the default file if the corpus has it, else the first file in path order."""
    rels = files(corpus)
    return DEFAULT_EDIT_REL if DEFAULT_EDIT_REL in rels else next(r for r in rels if r.endswith(".md"))
