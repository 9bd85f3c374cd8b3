"""Recall's narrow block: how far under the best corrected score it reaches, and when the ranking's first stays out."""

from test_recall_topics import NOTES, _texts, fact_note

FACTS = [
    "My sister Hannah works as a vet in Leeds.",
    "我爸爸退休前是中学物理老师，现在喜欢钓鱼。",
    "I work at a logistics startup as a data analyst.",
    "My team lead, Omar, prefers short stand-ups over long meetings.",
    "I'm writing a conference paper on demand forecasting, due in March.",
    "每周二晚上我去社区合唱团排练。",
    "On Friday evenings I play five-a-side football with old classmates.",
    "我对青霉素过敏。",
    "I can't eat gluten; bread and pasta give me stomach cramps.",
    "我最喜欢的水果是芒果。",
    "We booked a cabin by a lake in Finland for the first week of August.",
    "The train tickets to Helsinki airport are already paid for.",
    "我们家住在杭州西湖区，离地铁站步行五分钟。",
    "My laptop for work is a ThinkPad X1 Carbon.",
    "我用 Obsidian 记笔记。",
    "I read mostly crime novels, lately by Tana French.",
    "我女儿小雨今年十岁，在学小提琴。",
    "Our parrot Kiwi can say good morning.",
    "请用简短的要点回答我。",
    "Don't suggest recipes with mushrooms; I hate them.",
    "我每天骑电动车上班，大约二十分钟。",
    "I'm saving for a new bicycle, around 2,000 euros.",
    "我的牙医诊所在滨江区。",
    "My flight to Lisbon for the work offsite leaves on October 3.",
    "我在准备下个月的雅思考试。",
]
STORE = fact_note(FACTS)


def test_the_rankings_first_far_under_the_best_corrected_score_stays_out(make_memory):
    mem = make_memory(STORE)
    # before: the note-taking app first (it shares 我用/什么 with the question), then the answer
    texts = _texts(mem.recall("我在攒钱买什么？"))
    assert FACTS[21] in texts and FACTS[14] not in texts, texts
    # the ranking's first stays when it is the answer, or in the other script than the question
    assert _texts(mem.recall("How long is my commute?")) == [FACTS[20]]
    assert _texts(mem.recall("Where are we sleeping in Finland?")) == [FACTS[10]]


def test_a_narrow_gap_follows_the_spread_of_the_corrected_scores(make_memory):
    mem = make_memory(NOTES)
    # before (a fixed 0.01): five memories, the painting lessons and the job among them; the pool's scores lie
    # close together, so the gap is tighter
    texts = _texts(mem.recall("What am I preparing for work?"))
    assert any("roadmap review" in t for t in texts), texts
    assert not any("油画" in t or "产品经理" in t for t in texts) and len(texts) <= 3, texts


FAMILY = FACTS + [
    "My mother is a dentist with a small practice downtown.",
    "Every Christmas I buy my parents and my brother matching sweaters.",
    "我哥哥在深圳做律师，专门打知识产权官司。",
    "My brother's kids stay with us for two weeks every summer.",
    "我爸妈每年秋天去海南住两个月。",
]


def test_a_narrow_question_about_one_of_the_askers_people_keeps_what_the_corrected_score_keeps(make_memory):
    mem = make_memory({"user/facts.md": STORE["user/facts.md"] + "".join(
        f"- 2025-04-0{i + 1}: {t}\n" for i, t in enumerate(FAMILY[len(FACTS):]))})
    # before (the margin's 0.025 alone): the nephews' summer visit beside the brother's job; the sweaters beside it
    texts = _texts(mem.recall("What job does my brother have?"))
    assert FAMILY[27] in texts and FAMILY[28] not in texts, texts
    texts = _texts(mem.recall("我哥哥的孩子什么时候来？"))
    assert texts[0] == FAMILY[28] and FAMILY[26] not in texts, texts
    # cut by the corrected score alone (not with the margin), the sweaters came first here
    assert _texts(mem.recall("Where do my parents go in autumn?")) == [FAMILY[29]]
