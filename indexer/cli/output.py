"""What the command line prints: the versioned JSON envelope of every --json, and the --explain table."""

from __future__ import annotations

import json

import click

JSON_VERSION = 1  # bump when a documented field (docs/JSON.md) changes meaning or goes away

# --explain columns on a terminal: (explain key, heading); JSON keeps every key, unrounded
EXPLAIN_COLUMNS = (("relevance", "relev"), ("fts", "text"), ("vector", "vec"), ("feedback", "fb"),
                   ("bm25", "bm25"), ("cosine", "cosine"), ("fts_rank", "#fts"), ("vector_rank", "#vec"),
                   ("strength", "strength"), ("dynamics", "dyn"))


def emit(payload: dict) -> None:
    """One JSON object on one line, led by the shape's version."""
    click.echo(json.dumps({"version": JSON_VERSION, **payload}, ensure_ascii=False))


def by_store(reports: list[dict]) -> dict:
    """Per-store reports keyed by store name, the shape every per-store --json uses."""
    return {r["store"]: r for r in reports}


def per_store(data: dict, as_json: bool, line) -> None:
    """A per-store answer: the versioned JSON, or one line per store from line(name, report)."""
    if as_json:
        emit({"stores": data})
        return
    for name, report in data.items():
        click.echo(line(name, report))


def explain_table(hits) -> list[str]:
    """The score components of each hit as a short table, rounded to 3 places ('-' where absent)."""
    rows = [h for h in hits if h.explain]
    if not rows:
        return []
    cols = [(key, head) for key, head in EXPLAIN_COLUMNS if any(h.explain.get(key) is not None for h in rows)]
    table = [["#", "score", *[head for _key, head in cols]]]
    for i, h in enumerate(hits, 1):
        if h.explain:
            table.append([str(i), _cell(h.score), *[_cell(h.explain.get(key)) for key, _head in cols]])
    widths = [max(len(r[c]) for r in table) for c in range(len(table[0]))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(r, widths)) for r in table]
    words = next((h.explain.get("feedback_words") for h in rows if h.explain.get("feedback_words")), None)
    mode = rows[0].explain.get("mode")
    window = next((h.explain["window"] for h in rows if h.explain.get("window")), None)
    lines.append(f"mode {mode}" + (f"; feedback words: {', '.join(words)}" if words else "")
                 + (f"; time window {window}, {sum(bool(h.explain.get('in_window')) for h in rows)} hits in it"
                    if window else "") + "; all components: --json --explain")
    return lines


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.3f}"
