"""What `mdmem models` and `mdmem usage` say: each role's configured model, whether it answers, what made each store's vectors."""

from __future__ import annotations

import json
import os
import time

from indexer import ranking_model
from indexer.config import Config
from indexer.errors import MdmemError
from indexer.index import db, sql
from indexer.index.stores import store_roots
from indexer.providers import load_embedder, usage

PROBE_S = 5.0  # one try, this long at most, per remote provider


def models(cfg: Config, probe: bool = True) -> dict:
    """Roles (embedder, ranker, llm) with their settings, never a key; each store's vectors' maker."""
    return {"roles": {"embedder": _embedder(cfg, probe), "ranker": _ranker(cfg), "llm": _llm(cfg)},
            "stores": {name: _store(name, root) for name, root in store_roots(cfg)}}


def _embedder(cfg: Config, probe: bool) -> dict:
    out = {"provider": cfg.embedder, "model": cfg.embedder_model or (cfg.st_model if cfg.embedder ==
                                                                      "sentence-transformers" else ""),
           "base_url": cfg.embedder_base_url, "api_key_env": cfg.embedder_api_key_env,
           "dimensions": cfg.embedder_dimensions, "model_id": None, "answers": None, "ms": None, "error": None}
    if not probe:
        return out
    quick = cfg.with_(embedder_timeout_s=min(cfg.embedder_timeout_s, PROBE_S), embedder_max_retries=0)
    start = time.monotonic()
    try:
        emb = load_embedder(quick, fallback=False)
        emb.embed_query("probe 探测")
        out.update(model_id=emb.model_id, answers=True, dimensions=emb.dim,
                   api_key_env=getattr(emb, "key_env", "") or out["api_key_env"],
                   base_url=getattr(emb, "base_url", "") or out["base_url"], model=getattr(emb, "model", out["model"]))
    except MdmemError as exc:
        out.update(answers=False, error=str(exc))
    out["ms"] = round((time.monotonic() - start) * 1000, 1)
    if out["api_key_env"]:
        out["api_key_set"] = bool(os.environ.get(out["api_key_env"]))
    return out


def _ranker(cfg: Config) -> dict:
    provider = getattr(cfg, "ranker", "e5") if cfg.rerank else "none"
    return {"provider": provider, "model": getattr(cfg, "ranker_model", "") or (ranking_model.model_id() if provider == "e5"
                                                                               else ""),
            "base_url": getattr(cfg, "ranker_base_url", "")}


def _llm(cfg: Config) -> dict:
    return {"provider": getattr(cfg, "llm", "") or "none", "model": getattr(cfg, "llm_model", ""),
            "base_url": getattr(cfg, "llm_base_url", "")}


def _store(name: str, root) -> dict:
    path = root / "index.db"
    out = {"path": str(path), "embedder": None, "dimensions": None, "identity": None, "vectors": 0}
    if not path.exists():
        return out
    try:
        con = db.connect(path, readonly=True)
    except MdmemError as exc:
        return {**out, "error": str(exc)}
    try:
        meta = sql.read_meta(con)
        vectors = sql.get_stats(con)["vectors"]
    except MdmemError as exc:
        return {**out, "error": str(exc)}
    finally:
        con.close()
    try:
        identity = json.loads(meta.get("embedder_identity") or "null")
    except ValueError:
        identity = None
    return {**out, "embedder": meta.get("embedder"), "dimensions": int(meta.get("dimension") or 0),
            "identity": identity, "vectors": vectors}


def usage_totals(cfg: Config, since: float = 0.0) -> dict:
    rows = usage.totals(cfg.home, since)
    known = [r["estimated_cost_usd"] for r in rows if r["estimated_cost_usd"] is not None]
    return {"models": rows, "estimated_cost_usd": round(sum(known), 10), "path": str(cfg.home / usage.FILE)}
