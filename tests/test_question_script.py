"""Hits whose scores tie come in the question's script first (a day holding one fact in both languages)."""

DAY = """---
type: episodic
---
# 2026-11-20

- 2026-11-20: We moved the weekly meeting to Thursday at 3 pm.
- 2026-11-20: 我们把周会改到了周四下午三点。
"""


def test_a_day_in_two_languages_lists_the_question_language_first(make_memory):
    mem = make_memory(project_notes={"journal/2026-11-20.md": DAY})
    for question, first in (("11月20日", "周会"), ("2026年11月20日", "周会"), ("November 20, 2026", "weekly")):
        hits = mem.search(question, limit=5, bump=False)
        assert len(hits) == 2 and first in hits[0].content, (question, [(h.score, h.content) for h in hits])
    day = DAY.split("\n")
    swapped = "\n".join(day[:6] + [day[7], day[6]] + day[8:])  # either order in the file
    mem2 = make_memory(project_notes={"journal/2026-11-20.md": swapped})
    assert "周会" in mem2.search("11月20日", limit=5, bump=False)[0].content
