"""Recall: an instruction to the assistant answers how it should reply, not a question about the asker's own facts."""

from test_recall_narrow import FACTS, _texts

EXTRA = [
    "When you give me distances, use kilometres, not miles.",
    "I run about 30 kilometres a week along the river.",
    "When you suggest a database for my examples, use PostgreSQL.",
    "At work our data team runs everything on Snowflake.",
    "给我写邮件草稿时用正式的语气。",
    "我在一家律师事务所做行政，每天要处理很多邮件。",
    "When you recommend music, pick jazz or soul.",
    "I play bass guitar in a weekend jazz band.",
    "给我推荐茶的时候请选绿茶，不要红茶。",
    "我不吃葱，点外卖时都要备注不要葱。",
    "给我安排行程时请避开早班机。",
    "我每个月要去上海出差两次，一般坐高铁。",
    "帮我写周报时请按项目分段，不要写成流水账。",
    "我们组每周五下午交周报，组长是老陈。",
    "我每天下午喝一壶普洱茶。",
]
ALL = FACTS + EXTRA
STORE = {"user/facts.md": "---\ntype: fact\n---\n\n# Facts\n\n" + "".join(
    f"- 2025-0{1 + i // 9}-1{i % 9}: {t}\n" for i, t in enumerate(ALL))}


def test_a_question_about_the_askers_facts_is_not_answered_by_an_instruction(make_memory):
    mem = make_memory(STORE)
    # before: the instruction about examples' database was the whole block, the team's database missing
    texts = _texts(mem.recall("Which database do I work with?"))
    assert "At work our data team runs everything on Snowflake." in texts, texts
    assert not any("PostgreSQL" in t for t in texts), texts
    # before: the instruction about recommending music beside the band
    assert _texts(mem.recall("Which genre do I play?")) == ["I play bass guitar in a weekend jazz band."]
    # a question to the assistant about its replies keeps its instruction
    assert _texts(mem.recall("How should you give me distances?")) == [EXTRA[0]]
    texts = _texts(mem.recall("What should you keep in mind when you answer me?"))
    assert {EXTRA[0], EXTRA[2], EXTRA[6], FACTS[18]} <= set(texts), texts


def test_a_chinese_question_about_the_asker_leaves_instructions_out_but_not_facts_beside_one(make_memory):
    mem = make_memory(STORE)
    # before: the instruction on how to write the weekly report beside the line saying who gets it
    assert _texts(mem.recall("我的周报交给谁？")) == [EXTRA[13]]
    # a request for the assistant (给我…) keeps the instruction that answers it
    assert _texts(mem.recall("给我推荐茶要注意什么？")) == [EXTRA[8]]
    # a memory telling the assistant something and stating a fact of its writer ("I hate them") still answers
    texts = _texts(mem.recall("我忌口什么？"))
    assert FACTS[19] in texts, texts


def test_a_narrow_block_keeps_only_memories_near_the_best_margin(make_memory):
    mem = make_memory(STORE)
    # before: the mushroom line (within the corrected score's gap, far under the answer's margin) beside the app
    assert _texts(mem.recall("What do I use to take notes?")) == [FACTS[14]]
    # a two-answer question keeps both
    texts = _texts(mem.recall("Where do I travel for work and how?"))
    assert EXTRA[11] in texts and FACTS[23] in texts, texts
