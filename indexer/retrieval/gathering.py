"""Whether a question gathers (everything about a thing) or asks one fact, as e5 reads it against two question sets."""

from __future__ import annotations

import numpy as np

from indexer import ranking_model

# A question asking for everything about something is often worded without a list word ("What should you keep in
# mind when choosing a gift for me?", "What am I dealing with at home these days?"), so a regex of 哪些/all/tell me
# about misses it. e5 places a question by its form as well as its topic: its nearest questions among these two
# sets, both on the same everyday topics (car, home, money, friends, clothes, pets, school days), say which form it
# has. None names a store's people or facts.
BROAD = (
    "What do you know about my car?", "Tell me everything about my apartment.",
    "What should you keep in mind when choosing a gift for me?", "Give me an overview of my finances.",
    "What's going on with my house renovation these days?", "Which subscriptions and memberships do I pay for?",
    "What do you remember about my friends?", "Anything I should remember about my neighbours?",
    "What are my clothing and style preferences?", "Summarise what you know about my garden.",
    "What is there to know about our wedding plans?", "Tell me about my childhood.",
    "What am I dealing with at home lately?", "What are my money worries at the moment?",
    "What do I still have to take care of before the move?", "What should someone know before buying clothes for me?",
    "What would a house-sitter need to know about our place?", "What matters to me when choosing a place to live?",
    "Remind me of everything related to my tax return.", "What's the state of my savings and investments?",
    "How do I like my birthdays to be celebrated?", "How are things going with the garden this year?",
    "What do you know about my school days?", "What is important to me in a neighbourhood?",
    "What do I care about when buying furniture?",
    "关于我的车，你都知道些什么？", "说说我家房子的情况。", "给我挑礼物之前，你应该了解我哪些喜好？", "我的理财情况怎么样？",
    "我家装修最近进展到哪一步了，还有哪些事要办？", "我的穿衣风格和喜好是什么样的？", "我都交了哪些朋友？",
    "我家的宠物都有什么情况？", "搬家之前我还有哪些事情要处理？", "帮我梳理一下我每个月的各项开销。",
    "我在音乐方面有什么口味？", "关于我的婚礼筹备，你了解多少？", "我小时候的事你记得哪些？", "我家阳台上的花草现在怎么样了？",
    "跟我的邻居打交道要注意些什么？", "我买房这件事目前是什么进展？", "我报税需要准备些什么材料？", "我在钱的方面最近有什么烦心事？",
    "给我买衣服的时候要注意什么？", "我对住的地方有什么要求？", "我的存款和投资都放在哪里？", "我过生日一般喜欢怎么过？",
    "说说我上学那些年的经历。", "我对家里的布置有哪些讲究？",
)
NARROW = (
    "What is my sister's phone number?", "When does my car insurance expire?", "What colour is my car?",
    "What is the name of my landlord?", "How much is our monthly rent?", "Which bank holds my savings account?",
    "What's my neighbour's name?", "When is my best friend's birthday?", "Where did I buy my sofa?",
    "What size shoes do I wear?", "What is our wifi password?", "Which floor do we live on?", "Who cuts my hair?",
    "What breed is our cat?", "How old is my car?", "When did I move into this flat?", "Where is my spare key?",
    "What's my favourite colour?", "Which school did I go to as a child?", "What is my licence plate number?",
    "Where do I get my glasses made?", "How much did I pay for my bike?", "What did I name my goldfish?",
    "Which supermarket do I usually shop at?", "When is our wedding anniversary?", "Where did I meet my best friend?",
    "我妹妹的电话号码是多少？", "我哪天回老家？", "我的车是什么颜色的？", "我们的房东叫什么名字？", "我家房租一个月多少钱？",
    "我的工资卡是哪家银行的？", "我家隔壁邻居姓什么？", "我最好的朋友生日是几号？", "我家的沙发是在哪儿买的？",
    "我穿多大码的鞋？", "家里的无线网密码是什么？", "我们住在几楼？", "我一般去哪家理发店剪头发？", "我家的猫是什么品种？",
    "我的车开了几年了？", "我是哪一年搬进现在这套房子的？", "备用钥匙放在哪里了？", "我最喜欢什么颜色？", "我小学是在哪里上的？",
    "我的车牌号是多少？", "我的眼镜是在哪家店配的？", "我那辆自行车花了多少钱？", "我们结婚纪念日是哪天？",
    "我平时去哪家超市买东西？", "我和我最好的朋友是在哪里认识的？",
)
K = 3  # nearest questions per set: with 1 a narrow question of recall-focus-dev read 0.030, with 5 as with 3
# breadth at which a question reads as gathering. It follows topic as well as form: of questions written apart from
# both sets, 5 of 7 broad ones without a list word read 0.02 or more ("How do I spend my evenings?" 0.028), but so
# did narrow ones ("What am I preparing for work?" 0.030, 我在为什么攒钱？ 0.034, which then gathered seven memories
# around one answer) and 9 of bench/zh_memories.py's 40 one-answer questions. From 0.035 only wordings that ask what
# to keep in mind about the asker read so (the restaurant question of recall-focus-dev 0.058, a hairdresser one
# 0.040); recall-focus-dev precision 0.709 -> 0.724; the apart set as without it (pass 0.542; 0.625 at 0.02).
# A reading of form alone (topic-paired sets) is what would let 0.02 through.
OVER = 0.035


def reads(query: str, home=None, made=None) -> bool:
    """Whether e5 reads a question as gathering (breadth at least OVER); False without the model. made: the
    vectors a search made by text (search.search_within), so the question's is not made again (12 ms with the cores free)."""
    b = breadth(_vector(query, made or {}), home)
    return b is not None and b >= OVER


def _vector(query: str, made: dict):
    try:
        return made["e5", query].result()
    except Exception:  # not made by the search (another ranker, full text alone) or failed there: made here
        return ranking_model.query(query)


def breadth(qvec: np.ndarray | None, home=None, k: int = K) -> float | None:
    """The question's mean cosine to its k nearest BROAD questions less that to its k nearest NARROW ones (e5,
    both read as questions): above 0 it reads as gathering; None without the model."""
    if qvec is None:
        return None
    broad = ranking_model.background(BROAD, role="query", home=home)
    narrow = ranking_model.background(NARROW, role="query", home=home)
    if broad is None or narrow is None:
        return None
    return float(np.sort(broad @ qvec)[-k:].mean() - np.sort(narrow @ qvec)[-k:].mean())
