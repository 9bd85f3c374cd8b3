"""The `triggers` capture policy: a turn's sentences that state a fact, preference, plan or relation, or ask to be
remembered, kept with type, importance and speaker; chit-chat dropped, in English and Chinese."""

from __future__ import annotations

import pytest

from indexer.capture.triggers import extract, sentences

pytestmark = pytest.mark.unit


def kept(text: str, role: str = "user", speaker: str = "Mira") -> str:
    items = extract(text, speaker, role)
    assert len(items) <= 1  # a turn never becomes more lines than it had
    return items[0].text if items else ""


@pytest.mark.parametrize("turn", [
    "Hi! How are you doing today?", "It's a great way of relaxing!", "That's so kind of you.", "Thanks so much, lol 😂", "Haha that's hilarious!!", "ok", "👍👍",
    "Wow, that's amazing! How did it feel?", "I'm so happy for you!", "Hey John, I'm doing great!", "I definitely will.", "Yes, I did.", "I'll keep that in mind!",
    "You never know!", "I've been so busy lately.", "I'm so pumped about the weekend!", "I'll keep pushing, no matter what.", "That sounds great, I love that.",
    "I think so too.", "Good night, talk soon!", "What are you up to this weekend?",
    "哈哈", "好的", "谢谢你！", "你今天怎么样？", "嗯嗯，我知道了。", "晚安~", "真的吗？", "我觉得挺好的。", "我有点饿了。", "我今天好累啊！", "I'm tired."])
def test_chit_chat_is_dropped(turn):
    assert extract(turn, "Mira", "user") == []


@pytest.mark.parametrize("turn, type_", [
    ("I prefer oolong over espresso.", "preference"),
    ("I hate flying.", "preference"),
    ("I really love bouldering on weekends.", "preference"),
    ("I'm allergic to shellfish.", "preference"),
    ("I live in Porto and I work at a ceramics studio.", "fact"),
    ("My landlord's name is Ferreira.", "fact"),
    ("My sister Ines teaches violin.", "entity"),
    ("I'm going to Reykjavik in November.", "episodic"),
    ("I'm planning to adopt a greyhound.", "decision"),
    ("We moved into a flat near the river last spring.", "episodic"),
    ("I have two kids and a parrot.", "fact"),
    ("Just got a folding bike for the commute.", "episodic"),  # the first person left out
    ("I usually swim before work.", "fact"),
    ("I'm doing kickboxing twice a week.", "fact"),  # while "I'm doing great!" is chit-chat
    ("It's a painting of the harbour at dawn.", "fact"),  # a thing described, not judged
    ("我喜欢在山谷里泡温泉。", "preference"),
    ("我住在成都。", "fact"),
    ("我的车牌号是川A12345。", "fact"),
    ("我老公在医院上班。", "entity"),
    ("下周三要去牙医那里拔牙。", "decision"),
    ("我是一名中学老师。", "fact"),
    ("我最近在学吉他。", "fact"),
    ("我生日是十月十二号。", "fact"),  # a possessive without 的
    ("我周末一般去爬山。", "fact"),  # a habit, not a plan
    ("Remind me to call the plumber tomorrow.", "instruction"),
])
def test_facts_preferences_plans_and_relations_are_kept_with_a_type(turn, type_):
    items = extract(turn, "Mira", "user")
    assert [(i.text, i.type, i.speaker) for i in items] == [(turn, type_, "Mira")]
    assert 1 <= items[0].importance <= 5


@pytest.mark.parametrize("turn", ["I don't eat mushrooms.", "I never drink soda anymore.",
                                  "I can't stand horror films.", "我不吃香菜。", "我从不喝咖啡。", "我不能吃辣。", "我对芒果过敏。"])
def test_negated_preferences_are_kept_as_preferences(turn):
    items = extract(turn, "Mira", "user")
    assert [(i.text, i.type) for i in items] == [(turn, "preference")]


def test_a_request_to_remember_is_kept_and_weighs_more_than_a_plain_fact():
    plain = extract("My locker code is 4471.", "Mira")[0]
    asked = extract("Remember that my locker code is 4471.", "Mira")[0]
    assert asked.importance > plain.importance
    assert extract("记住，我的储物柜密码是4471。", "Mira")[0].importance == asked.importance
    rule = extract("Don't forget: always answer me in Spanish.", "Mira")
    assert rule[0].type == "instruction"
    assert extract("别忘了，以后都用中文回答我。", "Mira")[0].type == "instruction"


def test_only_the_sentences_with_facts_stay_from_a_chatty_turn():
    turn = "Haha, you're so funny! Anyway, I just started a pottery class downtown. Have you tried it? 😄"
    assert kept(turn) == "Anyway, I just started a pottery class downtown."
    zh = "哈哈，太好笑了！对了，我下个月要搬去杭州。你呢？"
    assert kept(zh) == "对了，我下个月要搬去杭州。"


def test_an_assistant_turn_keeps_only_what_it_says_about_the_user_and_what_it_commits_to():
    said = "What a lovely evening! You're allergic to walnuts, so I'll leave them out of the cake. Enjoy!"
    items = extract(said, "Flux the Cat", "assistant")
    assert [(i.text, i.speaker) for i in items] == [
        ("You're allergic to walnuts, so I'll leave them out of the cake.", "Flux the Cat")]
    assert extract("I love sunsets, they remind me of home.", "Flux the Cat", "assistant") == []  # its own taste
    assert extract("Noted!", "Flux the Cat", "assistant") == []
    assert kept("好的，我会提醒你周五交房租。", role="assistant") == "好的，我会提醒你周五交房租。"


def test_sentences_split_at_the_end_marks_of_both_languages_and_keep_decimals():
    assert sentences("I weigh 62.5 kg. Nice!\n我住在成都。你呢？") == ["I weigh 62.5 kg.", "Nice!", "我住在成都。",
                                                                 "你呢？"]


@pytest.mark.parametrize("turn", [
    "I won't give up!", "I won't let you down, Gina!", "I'll try my best.", "Never give up!", "Always here to help.",
    "We'll make it through this - hang in there!", "I'm gonna keep going, whatever comes my way.",  # pep talk
    "Got any advice?", "Need any help?", "Been playing long?",  # questions with the person left out
    "Been a busy week since we talked.", "It's been a lot of work.", "I might try it sometime!",
    "Taking care of ourselves and looking out for our well-being is key.",  # what holds for everyone
    "It's awesome how our passions shape our lives.", "Our loved ones give us strength to tackle any challenge.",
    "Can't wait to see your show, we need more places like this!",  # "this" alone is no date
    "我会一直支持你的！", "我们会一起渡过难关的。"])
def test_pep_talk_maxims_and_questions_without_the_speaker_are_chit_chat(turn):
    assert extract(turn, "Mira", "user") == []


@pytest.mark.parametrize("turn, type_", [
    ("My neighbour Bob keeps pigeons.", "entity"),  # a relation, a name and what they do
    ("My coach Dave runs marathons.", "entity"),
    ("That pic's from when my dance crew took first place.", "fact"),
    ("She had a tough time after the divorce.", "fact"),  # someone else's doings
    ("They signed it to show our friendship.", "fact"),
    ("He never gives up and always stands up for justice.", "fact"),
    ("Here's one of my trophies from the regional contest.", "fact"),  # showing one's own things
    ("Check out my painting for the art show!", "fact"),
    ("I see them at least once a week.", "fact"),  # a habit, not "I see."
    ("I love this series.", "preference"),  # a thing named, not "I love this!"
    ("I'm keen on counseling.", "fact"),
    ("Can't wait for tomorrow's grand opening!", "episodic"),  # an event with its day, not "Can't wait!"
    ("I'd really recommend this series.", "preference"),
    ("Still working on opening a bakery.", "decision"),  # the first person left out
    ("Gonna continue my studies in the fall.", "decision"),
    ("我邻居老王养鸽子。", "entity"),
    ("老王养了一群鸽子。", "fact"),
    ("她上周刚生了个女儿。", "fact"),
    ("他在一家银行工作。", "fact"),
    ("这是我的奖杯。", "fact"),
    ("给你看看我画的画。", "fact"),
])
def test_others_doings_things_shown_and_habits_are_kept(turn, type_):
    items = extract(turn, "Mira", "user")
    assert [(i.text, i.type) for i in items] == [(turn, type_)]


def test_a_kept_message_keeps_its_statements_around_the_fact_but_not_its_chatter():
    # the question asked later may be about a sibling sentence: here the trip, beside the liking
    turn = ("Thanks! Excited to try this. Love experimenting with spices. By the way, have you been to the harbour? "
            "Planning a trip there next month. You're so sweet!")
    items = extract(turn, "Tim", "user")
    assert [(i.text, i.type) for i in items] == [
        ("Excited to try this. Love experimenting with spices. Planning a trip there next month.", "preference")]
    assert kept("谢谢！我最近在学做面包。上周烤的那个有点焦。你周末有空吗？加油哦！") == "我最近在学做面包。上周烤的那个有点焦。"
    assert extract("Wow! That's so cool! Thanks for sharing, Jon!", "Tim", "user") == []  # nothing kept: nothing around
    said = "Great question! You're allergic to walnuts. Cakes are fun to bake."  # an assistant keeps its facts alone
    assert kept(said, role="assistant") == "You're allergic to walnuts."
