"""Recall's default cut: a narrow question gets its answer, a family gathers its members, an unrelated one nothing."""

from indexer.retrieval import relations, relevance

FACTS = "# Facts\n\n" + "".join(f"- 2025-02-0{1 + i // 3}: {t}\n" for i, t in enumerate([
    "My wife Elena teaches chemistry at a secondary school.",
    "我女儿小雨今年六岁，喜欢画画。",
    "My brother Tom runs a bicycle repair shop in Leeds.",
    "我爸爸以前是中学的数学老师。",
    "I take my tea with lemon and no sugar.",
    "我每周二晚上去打羽毛球。",
    "My car is a grey Toyota Corolla from 2018.",
    "I work as a data analyst at an insurance company.",
    "我对海鲜过敏，尤其是虾。",
    "I keep my passwords in Bitwarden.",
    "我住在杭州西湖区。",
    "My favourite film is Spirited Away.",
]))
NOTES = {"user/facts.md": FACTS}


def _texts(out):
    return [m["text"] for m in out["memories"]]


def test_search_reports_a_relevance_between_0_and_1(make_memory):
    mem = make_memory(NOTES)
    hits = mem.search("How do I take my tea?")
    shown = [h.to_dict()["relevance"] for h in hits]
    assert all(r is not None and 0.0 <= r <= 1.0 for r in shown)
    assert "tea with lemon" in hits[0].content


def test_a_narrow_question_gets_its_answer_only(make_memory):
    mem = make_memory(NOTES)  # the default cut (the cosine gap gave the tea question badminton and seafood too)
    for q, answer in (("How do I take my tea?", "tea with lemon"), ("我住在哪个城市？", "杭州"),
                      ("Which password manager do I use?", "Bitwarden"), ("我平时几点去锻炼？", "羽毛球")):
        texts = _texts(mem.recall(q))
        assert len(texts) == 1 and answer in texts[0], (q, texts)


def test_a_question_about_its_asker_is_never_left_empty(make_memory):
    mem = make_memory(NOTES, recall_cut="relevance")
    # no memory reads as relevant (the badminton one scores 0.40), yet only the asker's memories can answer
    texts = _texts(mem.recall("我固定做什么运动？"))
    assert texts and "羽毛球" in texts[0], texts
    assert relevance.about_asker("What do I drive?") and relevance.about_asker("咱们什么时候出发？")
    assert not relevance.about_asker("我国最长的河流是哪条？") and not relevance.about_asker("Who wrote Hamlet?")


def test_an_unrelated_question_gets_an_empty_block(make_memory):
    mem = make_memory(NOTES)
    # the first used to get the badminton memory (its words and the question's share nothing that answers)
    for q in ("世界上最长的河流是哪条？", "What is the tallest mountain in Africa?", "长城一共有多长？"):
        out = mem.recall(q)
        assert out["memories"] == [] and out["text"] == "", (q, _texts(out))


def test_a_family_question_gathers_every_member(make_memory):
    mem = make_memory(NOTES)
    for q in ("Tell me about my family.", "我家里人都是做什么的？"):
        texts = " ".join(_texts(mem.recall(q)))
        for member in ("Elena", "小雨", "Tom", "我爸爸"):
            assert member in texts, (q, member, texts)
        for other in ("tea with lemon", "Toyota", "Bitwarden"):
            assert other not in texts, (q, other, texts)


def test_family_words_are_general_vocabulary():
    assert relevance.asks_family("Tell me about my relatives") and relevance.asks_family("我家里人都好吗")
    assert not relevance.asks_family("我在哪一家公司上班？")
    assert relevance.gathers("我有哪些过敏？") and not relevance.gathers("How do I take my tea?")


def test_a_question_about_someone_else_keeps_its_answer(make_memory):
    notes = {"user/caroline.md": "# Caroline\n\n" + "".join(f"- 2025-03-0{1 + i}: {t}\n" for i, t in enumerate([
        "Caroline went camping at the lake with her family in June.",
        "Caroline's mother is a retired teacher.",
        "Caroline's brother plays the violin in an orchestra.",
        "Caroline adopted a grey cat named Luna.",
        "Caroline started a pottery class on Thursdays.",
    ]))}
    mem = make_memory(notes, recall_cut="relevance")
    # a family word in a question about someone else used to swap the block for the memories naming a relative
    for q in ("What did Caroline and her family do at the lake?", "Where did Caroline's family go camping?"):
        texts = " ".join(_texts(mem.recall(q)))
        assert "camping at the lake" in texts, (q, texts)
    assert not relevance.asks_own_family("What did Caroline and her family do?")
    assert relevance.asks_own_family("Tell me about my family.") and relevance.asks_own_family("我家里人都好吗")


RELATIVES = "# Facts\n\n" + "".join(f"- 2025-05-{10 + i}: {t}\n" for i, t in enumerate([
    "我女儿朵朵今年七岁，在读小学一年级。",
    "朵朵每周六上午去少年宫学围棋。",
    "朵朵对芒果过敏，吃了会起疹子。",
    "My husband Marco is a paramedic at the county ambulance service.",
    "I had a dental check-up at Riverside Clinic in March.",
    "我每天早上坐地铁二号线上班。",
    "I grow tomatoes and basil on the balcony.",
    "我最近在读《三体》。",
    "My manager, Ingrid Holm, reviews my pull requests on Fridays.",
    "每周四下午我和 Ingrid 开项目例会。",
    "I am learning to play the ukulele.",
    "我们家的猫叫团子，是一只英短。",
]))


def test_a_question_about_a_relative_gathers_every_memory_naming_them(make_memory):
    mem = make_memory({"user/facts.md": RELATIVES})
    # the daughter's later memories name her only as 朵朵: the gap cut kept the introduction alone
    for q in ("What do you know about my daughter?", "我女儿的情况都有哪些？"):
        texts = _texts(mem.recall(q))
        for part in ("七岁", "围棋", "芒果"):
            assert any(part in t for t in texts), (q, part, texts)
        assert not any("ukulele" in t or "三体" in t for t in texts), (q, texts)


def test_a_narrow_question_about_a_relative_keeps_the_memories_naming_them(make_memory):
    mem = make_memory({"user/facts.md": RELATIVES})
    # 女儿什么水果不能吃？ names no owner: a Chinese relation word alone is the asker's
    for q, answer, who in (("我老公是做什么工作的？", "paramedic", "Marco"), ("Who is my boss?", "Ingrid", "Ingrid"),
                           ("我家的猫叫什么名字？", "团子", "猫"), ("女儿什么水果不能吃？", "芒果", "朵朵")):
        texts = _texts(mem.recall(q))
        assert texts and answer in texts[0] and len(texts) <= 2, (q, texts)
        assert all(who in t for t in texts), (q, texts)  # any second memory is about the same one


def test_relation_words_and_names_are_read_in_both_languages():
    assert relations.asked("What does my wife's father do?") == {"father_in_law"}
    assert relations.asked("我爸妈身体好吗？") == {"father", "mother"}
    assert relations.asked("Who are my colleagues?") == {"colleague", "boss"}
    assert relations.words({"pet"}).split() == ["pet", "dog", "cat", "puppy", "kitten", "宠物", "狗", "猫", "犬"]
    assert not relations.asked("What am I allergic to?") and not relations.asked("大熊猫吃什么？")
    assert relations.asked_of_asker("孩子几点放学？", False) == {"son", "daughter"}
    assert not relations.asked_of_asker("她的孩子几岁？", False) and not relations.asked_of_asker("小王的孩子几岁？", False)
    assert not relations.asked_of_asker("What does her brother do?", False)
    texts = ["我儿子乐乐今年八岁。", "我妈退休前是会计。", "My cousin Jason plays basketball.", "Aroha, our new teammate, "
             "owns the reports.", "我们养了一只柴犬，叫可乐。"]
    assert relations.names(texts, {"son"}) == {"乐乐"}
    assert relations.names(texts, {"mother"}) == set()  # 退休 follows 我妈: a verb, not a name
    assert relations.names(texts, {"cousin", "colleague"}) == {"Jason", "Aroha"}
    assert relations.names(texts, {"pet"}) == {"可乐"}
    assert "brother" in relations.roles_of("My older brother Tom lives in Oslo.") and "son" in relations.roles_of("孩子的照片")
    assert not relations.roles_of("I run a kids' reading hour.") and not relations.roles_of("Caroline's mother paints.")


def test_a_question_about_how_to_answer_gathers_every_instruction(make_memory):
    rules = ["请用繁体中文回答我。", "Always cite the source when you quote a number.", "不要在回答里用 Markdown 表格。",
             "Explain code changes with a short summary first.", "回复的时候先说结论，再说理由。"]
    others = ["I answer customer support tickets on Monday mornings.", "我妈喜欢在微信上发语音。",
              "I take the 8:10 train to the office.", "我周末喜欢去爬山。", "My sister Nadia is a vet in Porto.",
              "I prefer window seats on trains.", "我的笔记本电脑是 ThinkPad X1。"]
    notes = {"user/facts.md": "# Facts\n\n" + "".join(f"- 2025-06-{10 + i}: {t}\n" for i, t in enumerate(rules + others))}
    mem = make_memory(notes)
    # the relevance cut kept the three Chinese ones: the English instructions lay outside its gap
    for q in ("How should you reply to me?", "你给我回答问题时要注意什么？"):
        texts = _texts(mem.recall(q))
        assert sorted(texts) == sorted(rules), (q, texts)
    assert relations.asks_instructions("How do you want to answer me?") and not relations.asks_instructions("你吃了吗")
