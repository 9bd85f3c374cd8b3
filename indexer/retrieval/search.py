"""Hybrid search over one or more stores: candidates per store, fusion, dynamics, one ranking."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.index import db
from indexer.retrieval import feedback
from indexer.retrieval import e5_stage
from indexer.retrieval import episodes
from indexer.retrieval import fusion
from indexer.retrieval import query_match
from indexer.retrieval import timespan
from indexer.retrieval import vector_leg
from indexer.retrieval import vector_matrix
from indexer.index import sql
from indexer.config import Config
from indexer import validation
from indexer.errors import ArgumentError
from indexer.models import Hit
from indexer.index.stores import Store
from indexer.notes.spaces import space_name, space_uri
from indexer.notes.textseg import fts_match_expression, has_han, match_any

MAX_QUERY_CHARS = 20_000


@dataclass(frozen=True)
class Query:
    text: str
    mode: str
    limit: int
    under: tuple[str, ...] = ()
    min_score: float = 0.0
    explain: bool = False
    space: str | None = None  # a checked space name; None: the default space (notes outside spaces/)
    since: str | None = None  # ISO day: memories dated on or after it
    until: str | None = None  # ISO day: memories dated before it (the day after the --until day)


def make_query(cfg: Config, text: str, mode: str | None = None, limit: int | None = None, under=(),
               min_score: float | None = None, explain: bool = False, space: str | None = None,
               since=None, until=None, now=None) -> Query:
    text = validation.text("query", text, '"backup plan"')
    mode = validation.mode(mode, cfg.mode)
    limit = validation.limit(limit, cfg.limit)
    min_score = validation.min_score(min_score, cfg.min_score)
    under = [under] if isinstance(under, str) else under or ()
    if not isinstance(under, (list, tuple)) or not all(isinstance(u, str) for u in under):
        raise ArgumentError("under", "must be a folder prefix or a list of them", under, 'under="projects/"')
    under = tuple(_valid_text(u).strip().lstrip("./") for u in under if u.strip())
    space = space_name(space)
    under = tuple(u if u.startswith(space_uri(space, "")) else space_uri(space, u) for u in under) if space else under
    since, until = timespan.bounds(since, until, timespan.today(now))
    return Query(text=_valid_text(text[:MAX_QUERY_CHARS]), mode=mode, limit=limit, under=under,
                 min_score=min_score, explain=explain, space=space, since=since, until=until)


def _valid_text(text: str) -> str:
    """Lone surrogates (undecodable bytes in argv) cannot reach SQLite or a model: make them U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def search(stores: list[Store], embedder, cfg: Config, q: Query) -> list[Hit]:
    """Run one query over the stores and return one merged ranking; counting accesses is the caller's."""
    want_vec = q.mode in ("hybrid", "vector") and embedder.dim > 0 and any(s.with_vec for s in stores)
    match = fts_match_expression(q.text) if q.mode in ("hybrid", "fts") or not want_vec else ""
    pool = max(cfg.candidates, q.limit * 2)
    # feedback is part of the weighted hybrid ranking it was measured in, not of plain full text
    fb = (cfg.feedback_docs, cfg.feedback_terms) if (
        q.mode == "hybrid" and want_vec and cfg.fusion == "weighted" and cfg.feedback_weight > 0) else None
    spaces = {st.name: space_filter(st, q.space) for st in stores}  # read once: every leg filters alike
    dated = q.since is not None or q.until is not None
    leg = vector_leg.VectorLeg(stores, embedder, q.text, pool, {
        st.name: spaces[st.name] is None and not dated and not q.under for st in stores}) if want_vec else None
    cands: dict[tuple, fusion.Candidate] = {}
    expanded: dict[str, tuple[str, ...]] = {}
    for st in stores:
        expanded[st.name] = _collect_text(st, q, match, pool, cands, spaces[st.name], fb)
    qvec = leg.vector if leg is not None else None
    for st in stores:
        if st.with_vec and leg is not None:
            _collect_vectors(st, q, leg, cands, spaces[st.name])
    mode = q.mode if qvec is not None or q.mode == "fts" else "fts"  # no vectors: degrade to full text
    listed = list(cands.values())
    if mode == "fts":
        scored = fusion.fts_only(listed)
    elif mode == "vector":
        scored = fusion.vector_only(listed)
    elif cfg.fusion == "rrf":
        scored = fusion.rrf(listed, cfg.rrf_k)
    else:
        w = cfg.vector_weight_han if has_han(q.text) else cfg.vector_weight
        scored = fusion.weighted(listed, w, cfg.feedback_weight if fb else 0.0, cfg.vector_weight_memory)
    hits = []
    for key, parts in scored.items():
        c = cands[key]
        mult = dynamics_multiplier(c.row, cfg.decay_floor)
        score = parts["score"] * mult
        if score < q.min_score or score <= 0:
            continue
        explain = None
        if q.explain:
            explain = {"mode": mode, "record": c.row["kind"], **{k: round(v, 6) for k, v in parts.items() if k != "score"},
                       "bm25": c.bm25, "cosine": c.similarity, "fts_rank": c.fts_rank, "vector_rank": c.vec_rank,
                       "feedback_bm25": c.bm25_feedback, "feedback_words": list(expanded.get(key[0], ())),
                       "relevance": round(parts["score"], 6), "strength": c.row["strength"], "dynamics": round(mult, 6)}
        hits.append(row_hit(c.row, key[0], score, explain))
    hits = episodes.lift(hits, q.text)
    hits.sort(key=lambda h: (-h.score, h.store, h.uri, h.start_line))
    if mode == "hybrid" and cfg.rerank:
        hits = e5_stage.rerank(hits, {k: c.row["content_hash"] for k, c in cands.items()},
                               {st.name: st.con for st in stores}, q.text)
    return hits[:q.limit]


def dynamics_multiplier(row: dict, floor: float) -> float:
    strength = 1.0 if row["evergreen"] else max(0.0, min(1.0, row["strength"]))
    return floor + (1.0 - floor) * strength


def _collect_text(st: Store, q: Query, match: str, pool: int, cands: dict, space: str | None,
                  fb=None) -> tuple[str, ...]:
    """Add this store's full-text candidates to cands; returns the feedback words used (fb = (docs, words))."""
    if not match:
        return ()
    words: tuple[str, ...] = ()
    found = sql.fts_search(st.con, query_match.match_for_store(st.con, q.text), pool, under=q.under,
                           space=space, since=q.since, until=q.until)
    chunks = sql.chunk_count(st.con) if found else 0  # shared by both idf sums below
    ideal = query_match.ideal_bm25(st.con, q.text, chunks) if found else 1.0  # stores on one scale
    for rank, r in enumerate(found, 1):
        c = cands.setdefault((st.name, r["id"]), fusion.Candidate((st.name, r["id"]), r))
        c.bm25, c.fts_rank = r["bm25"] / ideal, rank
    if fb and fb[0] > 0 and fb[1] > 0 and found:
        words = _feedback(st, q, found[:fb[0]], fb[1], pool, cands, space, chunks)
    return words


def _collect_vectors(st: Store, q: Query, leg: vector_leg.VectorLeg, cands: dict, space: str | None) -> None:
    """Add this store's nearest rows to cands, and the cosine of every full-text candidate without one."""
    near, from_matrix = leg.nearest(st, q, space)
    for rank, r in enumerate(near, 1):
        c = cands.setdefault((st.name, r["id"]), fusion.Candidate((st.name, r["id"]), r))
        c.similarity, c.vec_rank = r["similarity"], rank
    # full-text candidates the KNN pool missed still get their true cosine
    missed = [cid for (name, cid), c in cands.items() if name == st.name and c.similarity is None]
    for cid, sim in vector_matrix.cosines(st, leg.vector, missed, refresh=not from_matrix).items():
        cands[(st.name, cid)].similarity = sim


def space_filter(st: Store, space: str | None) -> str | None:
    """The SQL filter for a space: its name, "" for the default space, None when the store has no spaces
    (then the default space is every row and the faster unfiltered KNN applies)."""
    if space:
        return space
    return "" if sql.has_spaces(st.con) else None


def _feedback(st: Store, q: Query, top: list[dict], n_words: int, pool: int, cands: dict, space: str | None,
              chunks: int) -> tuple[str, ...]:
    """Search again with the words the best hits share; their BM25 becomes a second full-text signal."""
    exp = feedback.expansion_terms(
        db.index_terms(st.con, q.text), sql.content_terms(st.con, top),
        lambda term, surface, cap: sql.term_doc_count_upto(st.con, term, surface, cap), chunks, n_words)
    if not exp.words:
        return ()
    found = sql.fts_search(st.con, match_any(exp.words), pool, under=q.under, space=space,
                           since=q.since, until=q.until)
    ideal = query_match.ideal_bm25(st.con, " ".join(exp.words), chunks) if found else 1.0
    for r in found:
        c = cands.setdefault((st.name, r["id"]), fusion.Candidate((st.name, r["id"]), r))
        c.bm25_feedback = r["bm25"] / ideal
    return exp.words


def row_hit(r: dict, store_name: str, score: float, explain: dict | None = None) -> Hit:
    """A chunk row as the hit every caller sees."""
    return Hit(id=r["id"], uri=r["uri"], start_line=r["start_line"], end_line=r["end_line"], section=r["section"],
               content=r["content"], score=score, store=store_name, type=r["type"], importance=r["importance"],
               reinforcement=r["reinforcement"], access_count=r["access_count"], explain=explain, kind=r["kind"],
               date=r["memory_date"])
