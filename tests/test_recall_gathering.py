"""A question worded without a list word still gathers when e5 reads it as broad (retrieval/gathering)."""

from indexer import ranking_model
from indexer.retrieval import gathering, relations, relevance

from test_recall_topics import FACTS, NOTES


def _texts(out):
    return [m["text"] for m in out["memories"]]


def test_a_broad_question_without_a_list_word_gathers_its_answers(make_memory):
    mem = make_memory(NOTES)
    # before: read as narrow (no 哪些, all, tell me about), it kept only its best memory, the oil painting
    texts = _texts(mem.recall("在给我推荐兴趣班之前，你应该知道我在艺术上有什么爱好？"))
    assert sorted(texts) == sorted([FACTS[12], FACTS[10]]), texts
    # a one-fact question keeps its one answer
    assert _texts(mem.recall("What time is my train to work?")) == [FACTS[19]]


def test_e5_reads_broad_and_narrow_questions_of_other_topics():
    broad = ("What should you bear in mind before booking a hairdresser for me?",
             "What's happening with my volunteering lately?", "帮我挑香水的时候要考虑我什么口味？")
    # "What am I preparing for work?" and 我在为什么攒钱？ read 0.030 and 0.034: the reading follows topic too
    narrow = ("What is my landlady's name?", "Which podcast did I start yesterday?", "我的瑜伽课几点开始？",
              "我是哪年考的驾照？", "What am I preparing for work?", "我在为什么攒钱？")
    assert all(gathering.reads(q) for q in broad), [gathering.breadth(ranking_model.query(q)) for q in broad]
    assert not any(gathering.reads(q) for q in narrow), [gathering.breadth(ranking_model.query(q)) for q in narrow]


def test_recall_reads_gathering_with_the_vector_its_search_made(make_memory, monkeypatch):
    mem = make_memory(NOTES)
    question = "What time is my train to work?"
    model = ranking_model.load("query")
    real, asked = model.query, []

    def counted(text, *a, **k):
        asked.append(text)
        return real(text, *a, **k)
    monkeypatch.setattr(model, "query", counted)
    # no list word: the cut asks e5 whether it gathers
    assert not relevance.gathers(question) and not relations.asks_instructions(question)
    asked.clear()
    assert _texts(mem.recall(question)) == [FACTS[19]]
    # before: the search's vector and then the gathering reading's, the same question twice
    assert asked.count(question) == 1, asked
