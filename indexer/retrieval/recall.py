"""`recall`: the prompt-ready memory block, with weak-query fallbacks and silent degradation."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from dataclasses import replace

from indexer import validation
from indexer.errors import ArgumentError, CallerGoneError, MdmemError
from indexer.models import RECALL_HEADER, recall_source
from indexer.notes import item_metadata
from indexer.notes.append import strip_item
from indexer.notes.spaces import space_of
from indexer.notes.textseg import count_tokens, cut_by_tokens, mostly_han
from indexer.providers import llm
from indexer.retrieval import gathering, hubness, instructions, relations, relevance
from indexer.retrieval.ranking_stage import CROSS_SCRIPT

HEADER = RECALL_HEADER
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
_FRONT = re.compile(r"^---\n.*?\n(?:---|\.\.\.)\n", re.S)


def recall(query: str, *, cfg, search, record_access, warn, context: str | None = None, limit: int | None = None,
           max_chars: int | None = None, scope: str = "all", dated: bool = False, max_tokens: int | None = None,
           judge=None, cut=None, vectors=None, names: tuple[str, ...] = (), second=None) -> dict:
    """Best memories for a query as one text block within max_chars; never raises on a broken index.

    `search(text, scope, limit)` returns hits with their score components and counts nothing;
    `record_access(hits)` counts the memories handed out. Tiers: the raw query; if its best cosine
    is weak, the recent conversation prepended; then the configured rewrite command. The
    strongest tier's hits are used. dated: the search keeps only memories of the caller's since/until.
    max_tokens: the block's budget in tokens as the chunker counts them; given alone, characters are not counted.
    judge(hits, query) and cut(hits, query, judged, asked_for): whether the relevance cut decides, and the cut
    (`judges` and `on_topic` unless given: bench/recall_designs.py gives its own to compare designs of the cut).
    vectors(hits): {(store, id): e5 vector} of those hits, for the hubness-corrected cut (retrieval/hubness).
    names: the spaces asked in (a user's or a character's): a question naming one is about its asker.
    second(hits, query): the hits with the embedder's own corrected score beside e5's (retrieval/opinion).
    """
    judge, cut = judge or judges, cut or functools.partial(on_topic, home=cfg.home)
    limit = validation.limit(limit, cfg.recall_limit)  # a bad argument is the caller's to fix: it raises
    max_tokens = validation.max_tokens(max_tokens)
    max_chars = validation.max_chars(max_chars, cfg.recall_max_chars if max_tokens is None else UNCOUNTED)
    scope = validation.scope(scope)
    depth = max(limit, POOL) if cfg.recall_cut == "relevance" else limit  # the relevance cut looks deeper
    out = {"text": "", "memories": [], "tier": "none", "query": query}
    if not isinstance(query, str) or not query.strip():
        return out
    try:
        tiers = [("query", query)]
        best = _run(search, query, depth, scope)
        tail = context_tail(context or "", cfg.recall_context_turns, cfg.recall_context_chars)
        if _weak(best[1], cfg) and tail:
            q = f"{tail}\n{query}"
            best = max(best, _run(search, q, depth, scope), key=lambda r: r[1])
            tiers.append(("context", q))
        if _weak(best[1], cfg) and (cfg.llm or cfg.recall_rewrite_command):
            rewritten = _ask_llm(cfg, query, tail, warn) if cfg.llm else _rewrite(cfg, query, tail, warn)
            if rewritten:
                best = max(best, _run(search, rewritten, depth, scope), key=lambda r: r[1])
                tiers.append(("rewrite", rewritten))
    except CallerGoneError:
        raise  # nobody waits for this answer: the server says the client left, not that recall is unavailable
    except (MdmemError, OSError) as exc:
        warn(f"recall unavailable ({exc}); answering without long-term memory")
        return out
    hits, strength, used = best
    tier = next(name for name, q in tiers if q == used)
    weak = _weak(strength, cfg)

    def asked_for(h) -> bool:  # a weak question's days are what it asks for: 上周我做了什么, or 我干了什么 --since D
        return weak and (dated or bool(h.signals.get("in_window")))
    # the relevance was calibrated on questions: a conversation or a rewrite keeps the measured cut, and so does
    # a question naming a time or dates (its window says what is asked for: 上周 asks for everything of last week)
    judged = cfg.recall_cut == "relevance" and tier == "query" and not dated and any(
        h.relevance is not None for h in hits) and not any(h.signals.get("in_window") for h in hits)
    if judged and vectors is not None:
        hits = hubness.attach(hits, used, vectors(hits), home=cfg.home)
        hits = second(hits, used) if second is not None else hits
    # about something else than the asker and their people: no memory stands above what it scores on generic questions
    named = _names(used, names) and not _asker(used)
    elsewhere = bool(hubness.scored(hits)) and hubness.is_question(used) and not _asker(used) and not named and not (
        relevance.beyond_background(used)) and not hubness.answers(hits)
    # a question about the space's person is cut as one about its asker: to its relevant memories, or, when none
    # reads as relevant, by the gap ("Where does Alice live?" in alice's space had none and was emptied)
    judged = judged and (any(h.relevance is not None and h.relevance >= 0.5 for h in hits) if named else judge(
        hits, used))
    if not judged:
        hits = hits[:limit]  # the cut as it was measured: over the first `limit` hits
    if weak and not judged:
        # nothing close in meaning: keep only memories that share words with the query, or of the days asked for
        hits = [h for h in hits if not h.signals or h.signals.get("bm25") is not None or asked_for(h)]
    if judged and relevance.asks_own_family(used):
        hits = _with_members(hits, search, used, scope)
    elif judged and relations.asked_of_asker(used, relevance.about_asker(used)):
        hits = _with_roles(hits, search, used, scope)
    kept = [] if elsewhere else cut(hits, used, judged, asked_for)[:limit]
    memories = render_memories(kept, max_chars, max_tokens)
    if kept and not memories:  # what answers does not fit the budget: what fits of the rest, as before the cut
        kept = near_best(hits[:limit], used, asked_for)
        memories = render_memories(kept, max_chars, max_tokens)
    if kept and not memories:
        _too_small(kept, max_chars, max_tokens, cfg)
    shown = {m["id"] for m in memories}
    try:
        record_access([h for h in kept if h.id in shown])  # handed to a caller: an access
    except MdmemError:
        pass
    text = "\n".join([HEADER] + [m["line"] for m in memories]) if memories else ""
    return {"text": text, "memories": memories, "tier": tier, "query": used, "strength": round(strength, 4)}


# how far below the best e5 cosine an answer still lies: the 95th percentile of that gap was 0.016 on
# zh-memory-dev and 0.056 on locomo-facts-dev (bench/e5_calib.py); further down lie other topics
ON_TOPIC_GAP = 0.05


def on_topic(hits, query: str, judged: bool = False, asked_for=lambda h: False, home=None, made=None):
    """The hits that answer: with a calibrated relevance (retrieval/relevance) the block holds the memories
    judged relevant whose margin lies within ANSWER_GAP of the best, and nothing when none is relevant;
    without it (ranking model absent, a hit from elsewhere) the older cosine-gap cut applies. A question gathers by
    its words or as e5 reads it (retrieval/gathering; home: where its vectors are kept; made: the search's vectors)."""
    current = [h for h in hits if not h.signals.get("superseded")]
    if judged and any(h.relevance is not None for h in current):
        gather = relevance.gathers(query) or relations.asks_instructions(query) or gathering.reads(query, home, made)
        if relevance.about_asker(query) and hubness.scored(current) and not any(
                h.signals.get("member") or h.signals.get("role") for h in current):
            return hubness.answering(instructions.apart(current, query), gather, query)
        return _answering(hits, current, GATHER_GAP if gather else ANSWER_GAP, gather)
    return near_best(hits, query, asked_for)


def judges(hits, query: str) -> bool:
    """Whether the relevance cut decides this block (else the cosine-gap cut does, as measured before it).
    A question about its asker ("my", 我) is cut to its relevant memories, or, when none reads as relevant, keeps
    the gap cut: only the asker's memories can answer it, so it is never left empty ("我固定做什么运动？": the
    badminton memory scored 0.42). A question about anyone or anything else is emptied when nothing is relevant
    and otherwise keeps the gap cut: about a person in the store ("What did Caroline research?") every memory
    naming them reads as relevant, and the relevance cut left answers out (locomo-facts-dev, relevant lines in
    the block 0.739 -> 0.654; bench/recall_designs.py)."""
    relevant = any(h.relevance is not None and h.relevance >= 0.5 for h in hits)
    if relevance.about_asker(query) and hubness.scored(hits):
        return True  # the hubness-corrected scores cut it, relevant or not (retrieval/hubness)
    return relevant if _asker(query) else not relevant


def _names(query: str, names) -> bool:
    """Whether the question names one of the spaces asked in ("what does alice eat" in alice's space: her memories
    say "I", not "alice", so none stands high above the background and the answer test emptied the block), or,
    asked in one, speaks of a person as she, he or you (an agent's "What does she eat?", a SillyTavern user's
    "What do you do in the forest?" to the character whose space it is: emptied the same way)."""
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)" if n.isascii() else re.escape(n), query, re.I)
               for n in names if n) or (any(names) and bool(_PERSON.search(query)))  # 小明喜欢吃什么: no boundary


_PERSON = re.compile(r"\b(she|her|hers|herself|he|him|his|himself|you|your|yours|yourself)\b|她|他|你|您", re.I)


def _asker(query: str) -> bool:
    return relevance.about_asker(query) or bool(relations.asked_of_asker(query, False))  # 孩子…: the asker's


# a margin this far under the best still answers: the second of two answers lay within 0.02 of the first
# on recall-focus-dev's two-answer questions, the next unrelated memory 0.005-0.05 under it; at 0.02 an English
# answer to a Chinese question of bench/zh_memories.py (0.0245 under the best) left the block (inside 0.925)
ANSWER_GAP = 0.025
GATHER_GAP = 0.05  # a question asking for everything about a thing (relevance.gathers)


def _with_members(hits, search, query: str, scope: str):
    """A family question also searched with the family members' words: every member's memory joins the pool
    (the question's own words reach few of them: "family" is in none)."""
    seen = {(h.store, h.id) for h in hits}
    wide = search(f"{query} {relevance.MEMBER_WORDS}", scope, POOL)
    members = [h for h in wide if h.signals.get("member") and (h.store, h.id) not in seen]
    return hits + members


def _with_roles(hits, search, query: str, scope: str):
    """A question naming someone of the asker's ("my boss", 我老婆, "my son"): the memories naming them, by the
    relation word or by a name the store gives them ("我儿子乐乐" -> every memory naming 乐乐), are marked `role`;
    those the question's own search did not reach join the pool marked `widened` too (their relevance was read
    against other words)."""
    roles = relations.asked_of_asker(query, relevance.about_asker(query))
    known = relations.names([h.content for h in hits], roles)
    extra = [w for w in (relations.words(roles), *sorted(known)) if w]  # none for the assistant's instructions
    wide = search(" ".join([query, *extra]), scope, POOL) if extra else []
    more = relations.names([h.content for h in wide], roles) - known
    if more:  # an introduction only the wider search found: its names' memories too (one search when the pool had it)
        known |= more
        wide += search(" ".join(sorted(more)), scope, POOL)
    seen, out = set(), []
    for h in [*hits, *(replace(w, signals={**w.signals, "widened": True}) for w in wide)]:
        if (h.store, h.id) in seen:
            continue
        seen.add((h.store, h.id))
        if relations.names_any(h.content, roles, known):
            out.append(replace(h, signals={**h.signals, "role": True}))
        elif not h.signals.get("widened"):
            out.append(h)
    return out


def _answering(hits, current, gap: float, gather: bool = False):
    if any(h.signals.get("member") for h in current):  # a family question: its members' memories
        return sorted((h for h in hits if h.signals.get("member")), key=lambda h: not h.signals.get("own_member"))
    if any(h.signals.get("role") for h in current):
        return about_roles(hits, current, gather)
    rel = [h for h in current if h.relevance is not None and h.relevance >= 0.5]
    if not rel:
        return []
    best = max(h.signals["margin"] for h in rel)
    kept = [h for h in hits if h.relevance is not None and h.relevance >= 0.5 and h.signals["margin"] >= best - gap]
    return kept if hits[0] in kept else [hits[0], *kept]  # the ranking's first answer stays when any is relevant


def about_roles(hits, current, gather: bool):
    """The memories naming whom the question asks about: all of them for a question gathering ("What do you know
    about my son?"), else those the question's own search found within ANSWER_GAP of the best one's margin and
    near the best corrected score (hubness.naming_one)."""
    named = [h for h in hits if h.signals.get("role")]
    if gather:
        return named
    own = [h for h in current if h.signals.get("role") and not h.signals.get("widened") and h.relevance is not None]
    if not own:
        return named[:1]
    own.sort(key=lambda h: -h.signals["margin"])  # the best reading first: the ranking put 我女儿朵朵… over 朵朵对芒果过敏
    return hubness.naming_one([h for h in own if h.signals["margin"] >= own[0].signals["margin"] - ANSWER_GAP],
                              current)


def near_best(hits, query: str, asked_for=lambda h: False):
    """The hits whose ranking-model cosine is within ON_TOPIC_GAP of the best, and those asked_for(hit); text in
    the other script than the question's gets the stage's cross-script allowance (e5 scores a language against
    itself higher). Without that cosine (model absent) every hit stays."""
    han = mostly_han(query)

    def fair(h):
        c = h.signals.get("e5_cosine")
        return None if c is None else c + (CROSS_SCRIPT if mostly_han(h.content) != han else 0.0)
    # measured from the values still current: a struck-through old value (often the closer wording) must
    # not push the current one out of the block
    current = [fair(h) for h in hits if not h.signals.get("superseded")]
    best = max((f for f in current if f is not None), default=None)
    if best is None:
        return hits
    kept = [h for h in hits if asked_for(h) or (fair(h) is not None and fair(h) >= best - ON_TOPIC_GAP)]
    return kept if not hits or hits[0] in kept else [hits[0], *kept]  # the ranking's first answer always stays


# recall looks this deep and keeps what the relevance cut leaves (at most `limit`): a broad question's
# answers (every member of a family) reach below the first eight hits
POOL = 30


def _run(search, q: str, limit: int, scope: str):
    """(hits, strength, query): strength is the best absolute cosine, or 1.0/0.0 without vectors."""
    hits = search(q, scope, limit)
    cosines = [h.signals["cosine"] for h in hits if h.signals.get("cosine") is not None]
    strength = max(cosines) if cosines else (1.0 if hits else 0.0)
    return hits, float(strength), q


def _weak(strength: float, cfg) -> bool:
    return strength < cfg.recall_weak_cosine


def context_tail(context: str, turns: int, max_chars: int) -> str:
    """The last turns of a conversation (JSON messages or one turn per line), capped at max_chars."""
    context = context.strip()
    if not context:
        return ""
    try:
        data = json.loads(context)
        items = data.get("messages", data) if isinstance(data, dict) else data
        lines = [f"{m.get('role', '')}: {m.get('content', '')}".strip(": ") if isinstance(m, dict) else str(m)
                 for m in items]
    except (ValueError, TypeError, AttributeError):
        lines = [ln for ln in context.splitlines() if ln.strip()]
    text = "\n".join(" ".join(str(ln).split()) for ln in lines[-turns:] if str(ln).strip())
    return text[-max_chars:]


def _ask_llm(cfg, query: str, tail: str, warn) -> str:
    """Third tier with an LLM configured: it rewrites the question, with the conversation's tail, into a query
    in the question's language; one that fails or answers nonsense skips the tier."""
    try:
        return llm.rewrite_question(cfg, query, tail, chinese=mostly_han(query))
    except MdmemError as exc:
        warn(f"recall's rewrite by the LLM was skipped ({exc})")
        return ""


def _rewrite(cfg, query: str, tail: str, warn) -> str:
    """Third tier without an LLM configured: a user's command turns the query into a better one."""
    payload = query if not tail else f"{query}\n\n{tail}"
    try:
        done = subprocess.run(cfg.recall_rewrite_command, shell=True, input=payload, capture_output=True,
                              text=True, timeout=cfg.recall_rewrite_timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        warn(f"recall_rewrite_command failed ({exc.__class__.__name__}); fix it in config.toml")
        return ""
    if done.returncode != 0:
        warn(f"recall_rewrite_command exited {done.returncode}; fix it in config.toml")
        return ""
    return done.stdout.strip()[:2000]


def one_line_text(content: str) -> str:
    """A chunk's text on one line: front matter, heading and metadata lines dropped, a speaker's name kept."""
    content = _FRONT.sub("", content.replace("\r\n", "\n"))
    content = item_metadata.without(content)  # where a memory came from is for clients, not the prompt
    body = [strip_item(ln, keep_speaker=True) for ln in content.split("\n")
            if ln.strip() and not _HEADING_LINE.match(ln)]
    return " ".join("; ".join(body or content.split("\n")).split())


def _source(h) -> str:
    return recall_source(h.uri, h.start_line, h.end_line)


def _stamp(h) -> str:
    return f"[{h.date.replace('T', ' ')}] " if h.kind == "memory" and h.date else ""


UNCOUNTED = 10**9  # the character budget of a block whose budget is given in tokens alone
MIN_TEXT_TOKENS = 10  # the shortest part of a section a block shows by tokens before it is cut with …


def _smallest_line(h, size=len) -> int:
    """The block size that holds this memory: header, its date, its source and the shortest text shown
    (a memory is shown whole); size: len for characters, count_tokens for tokens."""
    text = one_line_text(h.content)
    shown = text if h.kind == "memory" else text[:validation.MIN_TEXT_CHARS]
    return size(f"{HEADER}\n- {_stamp(h)}{shown}{_source(h)}")


def _too_small(hits, max_chars: int, max_tokens: int | None, cfg):
    """The error of a budget that holds none of the memories found, naming the budget that was too small."""
    need = min(_smallest_line(h) for h in hits)
    if max_tokens is not None and need <= max_chars:
        need = min(_smallest_line(h, count_tokens) for h in hits)
        raise ArgumentError("max_tokens", f"is below the smallest memory found ({need} tokens)", max_tokens,
                            f"max_tokens={need}")
    raise ArgumentError("max_chars", f"is below the smallest memory found ({need} characters)", max_chars,
                        f"max_chars={max(need, cfg.recall_max_chars)}")


def _fit_tokens(line: str, text: str, h, room: int) -> str | None:
    """The line within `room` tokens: as it is, or a section's text cut by tokens; None when it cannot fit."""
    if count_tokens(line) <= room:
        return line
    rest = count_tokens(f"- {_stamp(h)}{_source(h)}") + 1  # + the … that ends a cut text
    if h.kind == "memory" or room - rest < MIN_TEXT_TOKENS:
        return None
    cut = f"- {_stamp(h)}{cut_by_tokens(text, room - rest)[0].rstrip()}…{_source(h)}"
    return cut if count_tokens(cut) <= room else None


def render_memories(hits, max_chars: int, max_tokens: int | None = None) -> list[dict]:
    """Best first, no duplicate (same text or overlapping lines), within max_chars (and max_tokens).

    A memory is whole or absent: one that does not fit is skipped for the next that does.
    A document section may be shortened to fill the room that is left.
    """
    used, tokens = len(HEADER), count_tokens(HEADER)
    seen_text: set[str] = set()
    spans: list[tuple[str, str, int, int]] = []
    out = []
    for h in hits:
        text = one_line_text(h.content)
        key = text.casefold()
        if not text or key in seen_text:
            continue
        if any(s == h.store and u == h.uri and a <= h.end_line and h.start_line <= b for s, u, a, b in spans):
            continue
        source = _source(h)
        stamp = _stamp(h)
        room = max_chars - used - 1 - len("- ") - len(stamp) - len(source)
        if len(text) > room:
            if h.kind == "memory" or room < 40:
                continue
            text = text[:room - 1].rstrip() + "…"
        line = f"- {stamp}{text}{source}"
        if max_tokens is not None:
            line = _fit_tokens(line, text, h, max_tokens - tokens)
            if line is None:
                continue
            text = line[len(f"- {stamp}"):len(line) - len(source)]
            tokens += count_tokens(line)
        used += 1 + len(line)
        seen_text.add(key)
        spans.append((h.store, h.uri, h.start_line, h.end_line))
        out.append({"line": line, "text": text, "uri": h.uri, "start_line": h.start_line, "end_line": h.end_line,
                    "store": h.store, "space": space_of(h.uri), "score": round(h.score, 6), "id": h.id,
                    "kind": h.kind, "date": h.date})
    return out
