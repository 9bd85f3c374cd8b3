"""Hubness-corrected relevance for recall (CSLS): a memory's e5 cosine less what it scores on generic questions."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from indexer import ranking_model
from indexer.index import sql
from indexer.notes.textseg import mostly_han

# Some memories lie close to every question in e5's space ("hubs": on recall-focus-dev a board-game night and a
# mother's retirement stood within 0.03 of the best cosine of most questions about the asker), and a Chinese
# question scores every English memory 0.03-0.10 lower. Cross-domain similarity local scaling (CSLS, from
# cross-lingual word retrieval) takes both out: a memory is judged by how far its cosine to the question stands
# above its mean cosine to its K nearest questions of a fixed set of generic personal questions in the
# question's language. The set names no store's people or facts; both languages ask about the same everyday topics.

QUESTIONS_EN = (
    "What did I eat for breakfast yesterday?", "Which restaurants do I like in town?", "What kind of tea do I drink?",
    "What is my favourite dessert?", "How often do I cook at home?",
    "What did the doctor tell me last time?", "Which medicine am I taking?", "When is my next dental check-up?",
    "How much do I sleep on weeknights?", "Do I have any injuries?", "What is my blood type?",
    "What is my sister's job?", "When is my mother's birthday?", "Where do my parents live?",
    "How old are my kids?", "What school does my daughter go to?", "What does my husband do on weekends?",
    "Who is my best friend?", "When did I last call my grandmother?", "What gift should I get for my nephew?",
    "What is my job title?", "Which team am I on at work?", "What deadlines do I have this month?",
    "What did we decide in the last meeting?", "Which tools do we use at the office?",
    "How long is my commute?", "What projects did I finish last year?", "What is my salary review date?",
    "What sports do I play?", "Which instrument am I learning?", "What books have I read recently?",
    "Which TV series am I watching?", "What music do I listen to while working?", "Do I go to the gym?",
    "What games do I like?", "Which board games do we own?", "What do I do on Sunday afternoons?",
    "Where did we go on holiday last summer?", "Which countries have I visited?", "When is my next flight?",
    "What hotel did I book?", "Do I need a visa for my trip?", "Where would I like to travel one day?",
    "Where is my apartment?", "How much is our rent?", "Who is our landlord?", "What furniture do we need?",
    "What is my home address?", "What car do I drive?", "When does my car insurance expire?",
    "Which bank do I use?", "How much do I save each month?", "What subscriptions do I pay for?",
    "What phone do I have?", "Which laptop do I use?", "What apps do I use every day?",
    "Which browser do I prefer?", "What is my email provider?", "Do I have a smartwatch?",
    "What pet do we have?", "What is my dog's name?", "Who feeds the cat when we are away?",
    "What languages do I speak?", "What am I studying at the moment?", "Which courses did I sign up for?",
    "What time do I usually get up?", "What is on my calendar tomorrow?", "Which days do I work from home?",
    "What are my goals for this year?", "What did I promise to do this week?", "What should I remember to buy?",
    "How should you format your replies to me?", "What tone do I prefer in your answers?",
    "Which programming languages do I know?", "What editor do I use?", "Where was I born?",
    "Which university did I attend?", "What was my first job?", "What are my plans for the weekend?",
)
QUESTIONS_ZH = (
    "我昨天晚饭吃了什么？", "我喜欢喝什么茶？", "我最爱的甜点是什么？", "我平时多久做一次饭？",
    "医生上次跟我说了什么？", "我现在在吃什么药？", "我下次看牙是什么时候？", "我晚上一般睡几个小时？", "我的血型是什么？",
    "我妹妹是做什么工作的？", "我妈妈的生日是哪天？", "我父母住在哪里？", "我的孩子多大了？", "我女儿在哪个学校上学？",
    "我老公周末一般干什么？", "我最好的朋友是谁？", "我上次给奶奶打电话是什么时候？", "给侄子送什么礼物好？",
    "我的职位是什么？", "我在公司哪个部门？", "我这个月有哪些截止日期？", "我的直属领导是谁？", "上次开会我们决定了什么？",
    "我们办公室用什么工具？", "我上班通勤要多久？", "我去年完成了哪些项目？", "我什么时候调薪？",
    "我平时做什么运动？", "我在学什么乐器？", "我最近看了哪些书？", "我在追哪部电视剧？", "我工作时听什么音乐？",
    "我去健身房吗？", "我喜欢玩什么游戏？", "我周日下午一般做什么？", "我们去年暑假去哪儿玩了？", "我去过哪些国家？",
    "我下一趟航班是什么时候？", "我订了哪家酒店？", "这次出行需要签证吗？", "我以后想去哪里旅行？",
    "我住在哪个小区？", "我们的房租是多少？", "我们的房东是谁？", "家里还需要买什么家具？",
    "我开的是什么车？", "我的车险什么时候到期？", "我用哪家银行？", "我每个月存多少钱？", "我订阅了哪些会员？",
    "我用的是什么手机？", "我用哪台笔记本电脑？", "我每天都用哪些应用？", "我有智能手表吗？",
    "我们家养了什么宠物？", "我家的猫叫什么名字？", "我们出门时谁来喂猫？", "我会说哪几种语言？", "我最近在学什么？",
    "我报了哪些课程？", "我一般几点起床？", "我明天有什么安排？", "我哪几天在家办公？", "我今年的目标是什么？",
    "我这周答应了要做什么事？", "我要记得买什么？", "你回复我的时候应该用什么格式？", "我喜欢你用什么语气回答？",
    "我会哪些编程语言？", "我用什么编辑器？", "我是在哪里出生的？", "我是哪所大学毕业的？", "我的第一份工作是什么？",
    "我这个周末有什么计划？", "我的身体有什么毛病？", "我家有几口人？",
)

K = 10  # nearest background questions per memory: 3 and 5 were noisier (focus 0.69-0.73), 20 and 40 flatter
# a narrow question keeps the memories within NARROW_GAP of the best corrected score, a gathering one GATHER_GAP
# (recall-focus-dev: narrow pass 0.727 -> 0.818 at 0.01, broad 0.462 -> 0.615; 0.015 / 0.025: focus 0.711)
NARROW_GAP = 0.01
GATHER_GAP = 0.02
# ...or, over a pool of SPREAD_MIN memories or more, NARROW_SPREAD times the spread (std) of its corrected scores:
# the pools' std ran 0.010-0.030, and a pool spread wide leaves two answers farther apart (我有什么食物不能吃？: the
# seafood allergy 0.0101 under the best, std 0.026) than a tight one leaves its next unrelated memory (0.0086 under,
# std 0.015). No fixed gap did both (0.008: zh memories 0.900; 0.011-0.015: narrow pass 0.818); 0.4-0.6 all did.
NARROW_SPREAD = 0.5  # 0: NARROW_GAP at any size
# the embedder's second opinion (retrieval/opinion) takes out of a narrow block what lies over OPINION_SPREAD stds
# under the best on both scores together; 0: not asked. Not heard by default: at 1.0 recall-focus-dev precision
# 0.724 -> 0.752 (zh memories, locomo-facts-dev the same), but the apart set lost a broad question read as narrow
# (我平时用什么电子产品？ kept one of its two answers: pass 0.542 -> 0.500); at 0.5 zh memories 0.975 -> 0.950 too;
# at 1.5 it changes nothing (bench/recall_opinion.py)
OPINION_SPREAD = 0.0
SPREAD_MIN = 10
# a narrow block also keeps only the memories within MARGIN_GAP of the best ranking-model margin among them: the
# corrected score keeps a memory e5 reads as barely relevant beside the answer (recall-focus-dev: narrow pass 0.864
# -> 0.909, precision 0.733 -> 0.738; 0.03-0.06 measure the same, apart set, zh memories, locomo-facts-dev unchanged;
# at 0.025 zh memories 0.975 -> 0.950, a same-script answer 0.027 under); 0: not applied
MARGIN_GAP = 0.05
# a narrow question's block keeps the ranking's first when it lies in the other script than the question (full text
# cannot have put it there, and e5 scores it lower: an iPad memory in Chinese for "Which devices does the user
# own?", 1.12 std under the best) or within FIRST_SPREAD stds of the best corrected score; a first in the question's
# script further under was never an answer (recall-focus-dev: 3 of 22 narrow blocks, 1.37-1.86 std under; zh
# memories: 2 of 40, 1.39-1.44 std, the answer then first; 1.0-1.35 measure the same). A gathering block keeps it
# (broad pass 0.615 -> 0.538 without), and so does a pool under SPREAD_MIN.
FIRST_SPREAD = 1.25
# a question not about the asker whose best memory stands under this has nothing in the store that answers it:
# the unrelated questions of recall-focus-dev scored -0.066..0.011 (0.006 for one the relevance kept; 0.042 for the
# mixed-script one on its English level alone, see question_levels),
# locomo-facts-dev's (about people in the store) 0.06 and more for 98 %; at 0.045 one conversation lost a
# relevant line, and an agent's "How does the user like to drink coffee?" reached 0.0285 (tests/test_add.py)
ANSWERS = 0.02
# a gathering question's answers lie near each other, a hub or a memory sharing one of its words does not: a memory
# of the block whose mean CSLS similarity to the other TOPIC_TOP best corrected memories lies under OFF_TOPIC leaves
# it (recall-focus-dev: 6 memories left, none an answer; precision 0.632 -> 0.647, pass, zh memories and
# locomo-facts-dev unchanged; at -0.02 0.643, at -0.01 with a wider gap answers left too, bench/recall_gather.py)
TOPIC_TOP = 10
OFF_TOPIC = -0.015


def vectors(stores, hits, read=sql.e5_vectors_of_chunks) -> dict:
    """(store, chunk id) -> the hit's e5 vector (read(con, ids): another table's), for those the stores hold."""
    out = {}
    for st in stores:
        ids = [h.id for h in hits if h.store == st.name]
        out.update({(st.name, i): v for i, v in read(st.con, ids).items()})
    return out


def levels(matrix: np.ndarray, han: bool, home=None) -> np.ndarray | None:
    """Each row's (a memory's e5 vector) mean cosine to its K nearest background questions of the language."""
    bg = ranking_model.background(QUESTIONS_ZH if han else QUESTIONS_EN, role="query", home=home)
    if bg is None or not len(bg) or not len(matrix):
        return None
    return np.sort(matrix @ bg.T, axis=1)[:, -K:].mean(axis=1)


def question_levels(matrix: np.ndarray, query: str, home=None) -> np.ndarray | None:
    """levels() in the question's language; a question written in both (two Latin words and two Han characters
    or more: "Kubernetes 里 Pod 和 Deployment 有什么区别？") takes the higher of the two for each memory, so a
    memory in either script must stand above what its own language asks of it (that question kept two memories
    with the English level alone; nothing else of recall-focus-dev, zh memories or locomo-facts-dev moved)."""
    if both_scripts(query):
        zh, en = levels(matrix, True, home), levels(matrix, False, home)
        return None if zh is None or en is None else np.maximum(zh, en)
    return levels(matrix, mostly_han(query), home)


_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def both_scripts(query: str) -> bool:
    return len(_LATIN_WORD.findall(query)) >= 2 and len(_HAN.findall(query)) >= 2


def attach(hits: list, query: str, vecs: dict, home=None) -> list:
    """Every hit with an e5 cosine and vector gets signals["hub"]: that cosine less its background level."""
    have = [h for h in hits if h.signals.get("e5_cosine") is not None and (h.store, h.id) in vecs]
    if not have:
        return hits
    level = question_levels(np.stack([vecs[(h.store, h.id)] for h in have]), query, home)
    if level is None:
        return hits
    score = {(h.store, h.id): round(float(h.signals["e5_cosine"] - r), 6) for h, r in zip(have, level)}
    hits = [replace(h, signals={**h.signals, "hub": score[(h.store, h.id)]}) if (h.store, h.id) in score else h
            for h in hits]
    top = scored(hits)[:TOPIC_TOP]
    if len(top) < 3:
        return hits
    sim = memory_csls(np.stack([vecs[(h.store, h.id)] for h in top]), np.array([mostly_han(h.content) for h in top]))
    fit = dict(zip(((h.store, h.id) for h in top), np.nanmean(sim, axis=1).round(6).tolist()))
    return [replace(h, signals={**h.signals, "topic_fit": fit[(h.store, h.id)]}) if (h.store, h.id) in fit else h
            for h in hits]


def memory_csls(vecs: np.ndarray, han: np.ndarray, k: int = 5) -> np.ndarray:
    """CSLS similarity between memories (diagonal NaN): 2 cos(x, y) less x's mean cosine to its k nearest of the
    others in y's script and y's in x's (e5 puts two memories of one script closer than a Chinese and an English)."""
    cos = vecs @ vecs.T
    np.fill_diagonal(cos, np.nan)
    near = np.zeros((len(vecs), 2))
    for s in (0, 1):
        for i, row in enumerate(cos):
            mine = row[(han == bool(s)) & ~np.isnan(row)]
            near[i, s] = np.sort(mine)[-k:].mean() if len(mine) else 0.0
    script = han.astype(int)
    out = 2 * np.nan_to_num(cos) - near[:, script] - near[:, script].T
    np.fill_diagonal(out, np.nan)
    return out


def scored(hits) -> list:
    """The current hits (no superseded value) that carry a corrected score, best first."""
    return sorted((h for h in hits if h.signals.get("hub") is not None and not h.signals.get("superseded")),
                  key=lambda h: -h.signals["hub"])


def answering(hits, gather: bool, query: str = "") -> list:
    """The memories within the narrow gap (NARROW_SPREAD stds of the pool's corrected scores, NARROW_GAP in a small
    pool; GATHER_GAP for a question gathering, less those off its topic: OFF_TOPIC) of the best corrected score, in
    the ranking's order, and the ranking's first (for a narrow question, unless far under: FIRST_SPREAD): the
    corrected score alone put an English memory about a bicycle shop over the badminton one for 我固定做什么运动？
    (recall-focus-dev: focus 0.778 either way, narrow 0.864 -> 0.818, broad 0.538 -> 0.615). With OPINION_SPREAD
    set (off by default), a narrow question's memory must also lie within OPINION_SPREAD stds (NARROW_GAP in a
    small pool) of the best on e5's and the embedder's scores together where the hits have both (`hub_both`,
    retrieval/opinion): the second opinion takes memories out, never puts one in; and every narrow block keeps
    only memories within MARGIN_GAP of the best ranking-model margin kept (within_margin)."""
    best = scored(hits)
    if not best:
        return []
    wide = len(best) >= SPREAD_MIN  # enough memories for their spread to say how far apart answers lie
    keys = ["hub"] if gather or not OPINION_SPREAD or not all(h.signals.get("hub_both") is not None for h in best) \
        else ["hub", "hub_both"]

    def gap(key: str) -> float:
        if gather:
            return GATHER_GAP
        times = NARROW_SPREAD if key == "hub" else OPINION_SPREAD  # apart: NARROW_SPREAD 0 leaves the opinion
        return times * float(np.std([h.signals[key] for h in best])) if wide and times else NARROW_GAP
    floor = {k: max(h.signals[k] for h in best) - gap(k) for k in keys}
    kept = [h for h in hits if all(h.signals.get(k) is not None and h.signals[k] >= floor[k] for k in keys)
            and not h.signals.get("superseded")
            and (not gather or h is hits[0] or h.signals.get("topic_fit", 0) >= OFF_TOPIC)]
    top, spread = best[0].signals["hub"], float(np.std([h.signals["hub"] for h in best]))
    first = hits[0].signals.get("hub")
    far = not gather and wide and first is not None and first < top - FIRST_SPREAD * spread and (
        mostly_han(hits[0].content) == mostly_han(query))
    kept = kept if hits[0] in kept or far else [hits[0], *kept]
    return kept if gather else within_margin(kept)


def within_margin(kept) -> list:
    """The memories of a narrow block within MARGIN_GAP of the best ranking-model margin among them (a memory
    without one stays)."""
    margins = [h.signals["margin"] for h in kept if h.signals.get("margin") is not None]
    if not MARGIN_GAP or not margins:
        return kept
    return [h for h in kept if h.signals.get("margin") is None or h.signals["margin"] >= max(margins) - MARGIN_GAP]


def naming_one(kept, pool) -> list:
    """A narrow question about one of the asker's people (recall.about_roles): of the memories it keeps, those also
    within the narrow gap (NARROW_SPREAD stds of the pool's corrected scores) of the best corrected one, in their
    order; all of them where the corrected scores cannot say (a memory without one, a pool under SPREAD_MIN).
    recall-focus-dev precision 0.695 -> 0.709 (0.5-1.0 std the same); ordered or cut by the corrected score alone,
    a gift to the parents came first for "Where do my parents go in autumn?" (tests/test_recall_narrow.py)."""
    best = scored(pool)
    if not NARROW_SPREAD or len(best) < SPREAD_MIN or any(h.signals.get("hub") is None for h in kept):
        return kept
    floor = max(h.signals["hub"] for h in kept) - NARROW_SPREAD * float(np.std([h.signals["hub"] for h in best]))
    return [h for h in kept if h.signals["hub"] >= floor]


# the answer test asks whether the store answers a question: a keyword search ("温泉", "coffee preference") asks
# for the memories holding its words, and a one-word query's corrected score says little (温泉 beside a memory
# about a hot spring scored under ANSWERS)
_QUESTION = re.compile(r"[?？]|^\s*(?:what|who|whom|whose|when|where|why|how|which|is|are|was|were|do|does|did|can|"
                       r"could|should|would|will|has|have)\b|什么|哪|谁|几|多少|吗|呢|怎么|为什么|如何|是否", re.I)


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text))


def answers(hits) -> bool:
    """Whether any memory stands ANSWERS above its background level (a question about something else: no)."""
    best = scored(hits)
    return bool(best) and best[0].signals["hub"] >= ANSWERS
