"""Superseded, not lost: a restated fact strikes through the old line (with the day and the new id), ranks
it below the current one, and `history` reads the chain back from the Markdown and the ids' aliases."""

from __future__ import annotations

import re
from datetime import date

from indexer.errors import MdmemError, ProviderUnavailable
from indexer.index import sql
from indexer.notes.append import strip_item
from indexer.notes.spaces import in_space
from indexer.notes.textseg import query_terms
from indexer.memories.get import find_record, record_dict
from indexer.notes.struck_lines import marked, struck
from indexer.retrieval.collect import space_filter

MIN_COSINE = 0.5  # restated facts measured 0.505-0.964 (bench/data/contradictions.jsonl); unrelated ones 0.28
MAX_CHANGED = 4  # words that differ on each side: a new value, not a new sentence
MIN_FRAME = 2  # words both open with: the subject and what is said of it ("I live in", "我 住在")
# a frame with one of these says a thing that can hold several values at once: having a dog does not end having a
# cat, an allergy to cats does not end one to peanuts (both measured as restatements without this list)
MANY_VALUED = {"have", "has", "had", "like", "likes", "love", "loves", "enjoy", "enjoys", "allergic", "also", "too",
               "有", "喜欢", "爱", "过敏", "也", "还"}
ONE_VALUED = {"最", "favourite", "favorite"}  # 最喜欢的颜色, my favourite colour: one at a time after all
# the subject ends at its first copula: a change at or before it is another subject with its own value ("The
# meeting with Anna is on Monday" → "with Ben", 我的体重是70公斤 → 我的身高是170厘米), not a new value
COPULAS = {"is", "are", "was", "were", "是"}
CANDIDATES = 5
# a restatement found by its opening words alone under this cosine is carried out and queued for review: against
# the stored dated line 6 of the 33 measured sit at 0.50-0.64 (我在阿里巴巴工作 → 腾讯, I live in Paris → Berlin), the
# others at 0.66-0.96 (bench/write_decisions.py; those said to have changed, moved to…, have their own evidence)
WEAK_COSINE = 0.65


# A restatement that opens differently ("I moved to Berlin; I live in Berlin now.") is caught by what it says:
# the same single-valued thing of the speaker (where one lives, works, studies; a phone number) with another
# value, and a word saying it changed. Things that hold several values (likes, has, visited) have no pattern.
_CHANGED = re.compile(r"\b(now|moved|no longer|any ?more|switched|changed|these days|new (job|number|address))\b|"
                      r"现在|目前|如今|搬到|搬去|搬家|跳槽|换到|换了|改成|换成|不再", re.I)
_VALUE_OF = {
    "lives": (re.compile(r"\b(?:I|we)(?: \w+)?,? (?:live|am living|are living) in ([^.;,!?]+?)(?: now)?(?=[.;,!?]|$)", re.I),
              re.compile(r"住在([^，。；,.!?！？]+?)(?:了)?(?=[，。；,.!?！？]|$)"),
              re.compile(r"\b(?:I|we) moved to ([^.;,!?]+?)(?=[.;,!?]|$)", re.I),
              re.compile(r"搬到了?([^，。；,.!?！？了]+)")),
    "works": (re.compile(r"\b(?:I|we)(?: \w+)?,? (?:work|am working) (?:at|for) ([^.;,!?]+?)(?: now)?(?=[.;,!?]|$)", re.I),
              re.compile(r"^我们?(?:现在|目前|如今)?(?:(?<!现)在)([^，。；在]{1,16}?)(?:工作|上班)|(?<!现)在([^，。；在]{1,16}?)(?:工作|上班)")),
    "studies": (re.compile(r"\b(?:I|we)(?: \w+)?,? (?:study|am studying) at ([^.;,!?]+?)(?: now)?(?=[.;,!?]|$)", re.I),
                re.compile(r"(?<!现)在([^，。；在]{1,16}?)(?:读书|上学|念书|读研|读博)")),
    "phone": (re.compile(r"\bmy (?:new )?(?:phone|mobile)(?: number)? is (?:now )?([+\d][\d -]+\d)", re.I),
              re.compile(r"我的?(?:新)?(?:手机号|电话号码|手机号码|电话)(?:现在)?(?:是|改成了?|换成了?)\s*([+\d][\d -]+\d)")),
}
# someone else's fact ("my sister now lives in Berlin") says nothing of the speaker's
_OTHER = re.compile(r"\b(sister|brother|mother|father|mom|mum|dad|wife|husband|son|daughter|friend|colleague|boss|"
                    r"he|she|they)\b|姐|妹|哥|弟|妈|爸|老婆|老公|太太|丈夫|妻子|儿子|女儿|朋友|同事|室友|他|她", re.I)


def _values(text: str) -> dict[str, str]:
    out = {}
    for thing, patterns in _VALUE_OF.items():
        for pat in patterns:
            m = pat.search(text)
            if m and not _OTHER.search(text[:m.start()]):
                value = next(g for g in m.groups() if g)
                out[thing] = " ".join(value.split()).casefold()
                break
    return out


def changes_value(old: str, new: str) -> bool:
    """Whether new, saying the value changed, gives the speaker's single-valued thing another value than old."""
    if not _CHANGED.search(new):
        return False
    was, now = _values(old), _values(new)
    return any(thing in was and was[thing] != value and was[thing] not in value and value not in was[thing]
               for thing, value in now.items())


def restates(old: str, new: str, cosine: float) -> bool:
    """Whether new gives a new value for what old said: the same opening words, a few words changed, close in
    meaning, and a frame that holds one value at a time. 21 of 22 measured restatements, none of 10 near pairs
    that both stay true (the 22nd, 我早上喜欢喝茶 → 喝咖啡, needs --supersedes); with the extended set (docs/BENCHMARKS.md,
    "Decisions at write") 41 of 42 and none of 24 near pairs."""
    if changes_value(old, new):  # its own evidence: reworded restatements measured 0.23-0.47 cosine
        return True
    if cosine < MIN_COSINE:
        return False
    a, b = query_terms(old, drop_stopwords=False), query_terms(new, drop_stopwords=False)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    da, db = a[p:len(a) - s], b[p:len(b) - s]
    frame = set(a[:p]) | set(a[len(a) - s:])
    many = frame & MANY_VALUED and not frame & ONE_VALUED
    copula = next((i for i, t in enumerate(a) if t in COPULAS), None)
    if copula is not None and p <= copula:
        return False
    return p >= MIN_FRAME and 1 <= len(da) <= MAX_CHANGED and 1 <= len(db) <= MAX_CHANGED and not many


def restated(text: str, type_: str, stores, embedder, space: str | None):
    """(store, row) of the memory this new text gives a new value for, or None; events never supersede."""
    if type_ == "episodic" or not embedder.dim:
        return None
    try:
        vec = embedder.embed_documents([text])[0]
    except ProviderUnavailable:
        return None  # the memory is still written and its vector waits; no older value is struck through this time
    best = None
    for st in stores:
        if not st.with_vec:
            continue
        for row in sql.vector_search(st.con, vec, CANDIDATES, space=space_filter(st, space)):
            old = strip_item(row["content"].split("\n", 1)[0])
            if (row["kind"] == "memory" and in_space(row["uri"], space) and not marked(row["content"])
                    and old.casefold() != text.casefold() and restates(old, text, row["similarity"])
                    and (best is None or row["similarity"] > best[1]["similarity"])):
                best = (st, row)
    return best


def mark_old(stores, old_id: str, new_id: str, space: str | None, today: date, update) -> dict:
    """Strike the old memory through in its note (date and counters kept); `update(id, text)` writes it."""
    st, row = find_record(stores, old_id, space)
    text = strip_item(row["content"].split("\n", 1)[0])
    done = update(row["id"], struck(text, today, new_id))
    return {"id": done["id"], "previous_id": row["id"], "uri": done["uri"], "start_line": done["start_line"],
            "text": text}


def history(stores, record_id: str, space: str | None = None) -> dict:
    """The versions of a memory, oldest first: the lines it superseded, itself, what superseded it; each with
    the ids that name it (every id it had before an edit)."""
    st, row = find_record(stores, record_id, space)
    chain = [(st, row)]
    seen = {row["id"]}
    while True:  # back: the memory whose struck line names this one (or one of its former ids)
        cur_st, cur = chain[0]
        prev = _replaced_by(stores, cur_st, cur, space, seen)
        if prev is None:
            break
        chain.insert(0, prev)
    while True:  # forward: the id the struck line names
        cur_st, cur = chain[-1]
        m = marked(cur["content"])
        nxt = None
        if m:
            try:
                nxt = find_record(stores, m.group("id"), space)
            except MdmemError:  # the newer memory was forgotten: the chain ends at the struck line
                nxt = None
        if nxt is None or nxt[1]["id"] in seen:
            break
        seen.add(nxt[1]["id"])
        chain.append(nxt)
    versions = []
    for s, r in chain:
        m = marked(r["content"])
        item = record_dict(s.name, r)
        versions.append({"id": r["id"], "ids": [*sql.ids_naming(s.con, r["id"]), r["id"]], "text": item["text"],
                         "date": item["date"], "uri": r["uri"], "start_line": r["start_line"],
                         "store": s.name, "current": m is None,
                         "superseded_on": m.group("day") if m else None,
                         "superseded_by": m.group("id") if m else None})
    return {"id": record_id, "versions": versions}


def _replaced_by(stores, cur_st, cur: dict, space: str | None, seen: set):
    for name in [*sql.ids_naming(cur_st.con, cur["id"]), cur["id"]]:
        for st in stores:
            for r in sql.memories_mentioning(st.con, f"by {name})"):
                m = marked(r["content"])
                if m and m.group("id") == name and r["id"] not in seen and in_space(r["uri"], space):
                    seen.add(r["id"])
                    return st, r
    return None


def add_superseding(do_add, stores, embedder, text: str, type_: str, space: str | None, supersedes: str | None,
                    auto: bool, update, today: date | None = None) -> dict:
    """`do_add(dedupe)` (the plain add), then the memory it replaces struck through: the caller's `supersedes` id
    (checked before anything is written) or, with `auto`, the memory it restates with a new value."""
    old = find_record(stores(), supersedes, space) if supersedes else None
    if old is None and auto and isinstance(text, str) and text.strip():
        old = restated(text.strip(), type_, stores(), embedder, space)
    res = do_add(old is None)  # a memory it replaces is no twin to reinforce
    if old is None or res.get("action") != "appended" or not res.get("id"):
        return res
    done = mark_old(stores(), old[1]["id"], res["id"], space, today or date.today(), update)
    if not supersedes:  # the rule's own decision: how it knew, for the decision log and the review queue
        cosine = float(old[1].get("similarity") or 0.0)
        done.update(similarity=round(cosine, 4), weak=not changes_value(done["text"], text) and cosine < WEAK_COSINE)
    return {**res, "superseded": done}


def with_chain(stores, got: dict, space: str | None) -> dict:
    """A memory as `get` gives it, with the versions it belongs to when it superseded or was superseded."""
    if "id" not in got or "records" in got:
        return got
    versions = history(stores, got["id"], space)["versions"]
    if len(versions) < 2:
        return got
    return {**got, "chain": [{k: v[k] for k in ("id", "text", "date", "current", "superseded_on")} for v in versions]}
