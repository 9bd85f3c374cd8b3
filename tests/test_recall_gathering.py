"""A question worded without a list word still gathers when e5 reads it as broad (retrieval/gathering)."""

from indexer import ranking_model
from indexer.retrieval import gathering

from test_recall_topics import FACTS, NOTES


def _texts(out):
    return [m["text"] for m in out["memories"]]


def test_a_broad_question_without_a_list_word_gathers_its_answers(make_memory):
    mem = make_memory(NOTES)
    # before: read as narrow (no 哪些, all, tell me about), each kept only its best memory: the online chess, the
    # oil painting
    texts = _texts(mem.recall("How do I spend my evenings?"))
    assert sorted(texts) == sorted([FACTS[13], FACTS[10]]), texts
    texts = _texts(mem.recall("我在艺术方面有什么爱好？"))
    assert FACTS[12] in texts and FACTS[10] in texts, texts
    # a one-fact question keeps its one answer
    assert _texts(mem.recall("What time is my train to work?")) == [FACTS[19]]


def test_e5_reads_broad_and_narrow_questions_of_other_topics():
    broad = ("What should you bear in mind before booking a hairdresser for me?",
             "What's happening with my volunteering lately?", "我对香水有什么偏好？")
    narrow = ("What is my landlady's name?", "Which podcast did I start yesterday?", "我的瑜伽课几点开始？",
              "我是哪年考的驾照？")
    assert all(gathering.reads(q) for q in broad), [gathering.breadth(ranking_model.query(q)) for q in broad]
    assert not any(gathering.reads(q) for q in narrow), [gathering.breadth(ranking_model.query(q)) for q in narrow]
