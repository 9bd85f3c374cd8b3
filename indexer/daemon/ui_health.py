"""The memory browser's health view: stores and skipped notes, the models and their fill, the jobs, doctor."""

from __future__ import annotations

from dataclasses import asdict

from indexer.index import sql
from indexer.sync import doctor, model_report
from indexer.daemon.scheduler import JOBS


def status(mem, _query=None) -> dict:
    """GET /v1/ui/status: per store (global, and the project's when the daemon serves one), its notes, chunks,
    vectors, pending and skipped notes (as `mdmem status`), with each skipped note's reason under "skipped_notes"
    ({uri: why}); the models (as `mdmem models --json --no-probe`) with each store's fill ("fill": vectors and
    ranking vectors made, and waiting); the jobs: what each store's writer does now and how often the scheduled
    passes run."""
    stores = mem.status(scope="all")  # the daemon's project store too: the page lists, edits and searches it
    for st in mem.stores("all"):
        if st.name in stores:
            stores[st.name]["skipped_notes"] = {uri: seen[2] for uri, seen in sql.skipped_notes(st.con).items()}
    models = model_report.models(mem.cfg, probe=False)  # a probe may wait on a remote provider: doctor does it
    for name, s in stores.items():
        e5_have, e5_all = (s.get("e5") or [0, 0])[:2]
        models["stores"].setdefault(name, {})["fill"] = {
            "vectors": s.get("vectors", 0), "vectors_pending": s.get("vectors_pending", 0),
            "ranking_vectors": e5_have, "ranking_texts": e5_all}
    jobs = {"running": {name: s.get("busy") for name, s in stores.items()},
            "waiting": {name: s.get("pending", 0) for name, s in stores.items()},
            "every_minutes": {job: float(getattr(mem.cfg, f"{job}_minutes")) for job in JOBS}}
    return {"stores": stores, "models": models, "jobs": jobs}


def checks(mem, _body=None) -> dict:
    """POST /v1/ui/doctor: `mdmem doctor`'s checks, run now ({"ok", "checks": [{"name", "ok", "detail"}]});
    a POST because it loads and calls the embedder, which may take seconds."""
    found = [asdict(c) for c in doctor.run_checks(mem.cfg)]
    return {"ok": all(c["ok"] for c in found), "checks": found}
