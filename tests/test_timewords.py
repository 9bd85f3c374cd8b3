"""Time words → a window of days: Chinese and English, relative words and explicit dates, against a fixed today."""

from __future__ import annotations

from datetime import date

import pytest

from indexer.errors import InputError
from indexer.notes.timewords import cn_number, find
from indexer.retrieval.timespan import today

pytestmark = pytest.mark.unit

TODAY = date(2026, 11, 25)  # a Wednesday


def window(text: str, now: date = TODAY) -> tuple[str, str] | None:
    w = find(text, now)
    return None if w is None else (w.start.isoformat(), w.end.isoformat())


@pytest.mark.parametrize("text, span", [
    ("我今天做了什么", ("2026-11-25", "2026-11-25")),
    ("昨天吃了什么", ("2026-11-24", "2026-11-24")),
    ("我前天干了什么", ("2026-11-23", "2026-11-23")),
    ("大前天去哪了", ("2026-11-22", "2026-11-22")),
    ("上周我做了什么", ("2026-11-16", "2026-11-22")),
    ("上个星期开了什么会", ("2026-11-16", "2026-11-22")),
    ("上礼拜", ("2026-11-16", "2026-11-22")),
    ("上上周", ("2026-11-09", "2026-11-15")),
    ("这周的安排", ("2026-11-23", "2026-11-25")),
    ("本周", ("2026-11-23", "2026-11-25")),
    ("上个月读了哪些书", ("2026-10-01", "2026-10-31")),
    ("上月", ("2026-10-01", "2026-10-31")),
    ("这个月花了多少钱", ("2026-11-01", "2026-11-25")),
    ("今年去过哪些城市", ("2026-01-01", "2026-11-25")),
    ("去年去了哪里旅游", ("2025-01-01", "2025-12-31")),
    ("前年", ("2024-01-01", "2024-12-31")),
    ("去年三月去了哪里", ("2025-03-01", "2025-03-31")),
    ("去年3月", ("2025-03-01", "2025-03-31")),
    ("今年五月", ("2026-05-01", "2026-05-31")),
    ("三天前", ("2026-11-22", "2026-11-22")),
    ("两周前", ("2026-11-08", "2026-11-14")),
    ("一个月前", ("2026-10-01", "2026-10-31")),
    ("两年前", ("2024-01-01", "2024-12-31")),
    ("十天以前", ("2026-11-15", "2026-11-15")),
    ("最近在忙什么", ("2026-11-12", "2026-11-25")),
    ("最近三天", ("2026-11-23", "2026-11-25")),
    ("过去两周", ("2026-11-12", "2026-11-25")),
    ("前几天", ("2026-11-19", "2026-11-24")),
    ("上周一开会", ("2026-11-16", "2026-11-16")),
    ("上周五", ("2026-11-20", "2026-11-20")),
    ("这周一", ("2026-11-23", "2026-11-23")),
    ("星期天", ("2026-11-22", "2026-11-22")),
    ("上周末", ("2026-11-21", "2026-11-22")),
    ("三月份", ("2026-03-01", "2026-03-31")),
    ("十二月", ("2025-12-01", "2025-12-31")),
    ("11月18日做了什么", ("2026-11-18", "2026-11-18")),
    ("十一月十八号", ("2026-11-18", "2026-11-18")),
    ("12月3日", ("2025-12-03", "2025-12-03")),
    ("2025年3月15日", ("2025-03-15", "2025-03-15")),
    ("2023年5月", ("2023-05-01", "2023-05-31")),
    ("2024年", ("2024-01-01", "2024-12-31")),
])
def test_chinese(text, span):
    assert window(text) == span


@pytest.mark.parametrize("text, span", [
    ("What did I do today?", ("2026-11-25", "2026-11-25")),
    ("what did I eat yesterday", ("2026-11-24", "2026-11-24")),
    ("the day before yesterday", ("2026-11-23", "2026-11-23")),
    ("last night", ("2026-11-24", "2026-11-24")),
    ("What did I do last week?", ("2026-11-16", "2026-11-22")),
    ("the week before last", ("2026-11-09", "2026-11-15")),
    ("this week", ("2026-11-23", "2026-11-25")),
    ("last month", ("2026-10-01", "2026-10-31")),
    ("this month", ("2026-11-01", "2026-11-25")),
    ("last year", ("2025-01-01", "2025-12-31")),
    ("this year", ("2026-01-01", "2026-11-25")),
    ("Where did I go last March?", ("2026-03-01", "2026-03-31")),
    ("last November", ("2025-11-01", "2025-11-30")),
    ("in March last year", ("2025-03-01", "2025-03-31")),
    ("camping in June", ("2026-06-01", "2026-06-30")),
    ("in December", ("2025-12-01", "2025-12-31")),
    ("since September", ("2026-09-01", "2026-11-25")),
    ("two days ago", ("2026-11-23", "2026-11-23")),
    ("3 days ago", ("2026-11-22", "2026-11-22")),
    ("a week ago", ("2026-11-15", "2026-11-21")),
    ("a couple of months ago", ("2026-09-01", "2026-09-30")),
    ("a year ago", ("2025-01-01", "2025-12-31")),
    ("recently", ("2026-11-12", "2026-11-25")),
    ("lately", ("2026-11-12", "2026-11-25")),
    ("in the past 3 days", ("2026-11-23", "2026-11-25")),
    ("over the last two weeks", ("2026-11-12", "2026-11-25")),
    ("the past week", ("2026-11-19", "2026-11-25")),
    ("last Monday", ("2026-11-16", "2026-11-16")),
    ("on Monday", ("2026-11-23", "2026-11-23")),
    ("on Friday", ("2026-11-20", "2026-11-20")),
    ("last weekend", ("2026-11-21", "2026-11-22")),
    ("Who did Maria have dinner with on May 3, 2023?", ("2023-05-03", "2023-05-03")),
    ("What movie did Joanna watch on 1 May, 2022?", ("2022-05-01", "2022-05-01")),
    ("the 3rd of March 2024", ("2024-03-03", "2024-03-03")),
    ("on November 18", ("2026-11-18", "2026-11-18")),
    ("on 2026-11-18", ("2026-11-18", "2026-11-18")),
    ("2026/11/18", ("2026-11-18", "2026-11-18")),
    ("in March 2023", ("2023-03-01", "2023-03-31")),
    ("Sept 2023", ("2023-09-01", "2023-09-30")),
    ("2023-05", ("2023-05-01", "2023-05-31")),
    ("What did she buy in 2022?", ("2022-01-01", "2022-12-31")),
    ("Where was John between August 11 and August 15 2023?", ("2023-08-11", "2023-08-15")),
])
def test_english(text, span):
    assert window(text) == span


@pytest.mark.parametrize("text", [
    "How long ago was Caroline's 18th birthday?", "This may be wrong", "what do I like to eat",
    "我喜欢什么咖啡", "一起去吃饭", "may I ask", "",
    "Room 2023 is free", "the 1990s", "a weekly report",
])
def test_no_time_words(text):
    assert window(text) is None


def test_most_specific_words_win_and_leave_the_text():
    w = find("去年三月我去了哪里", TODAY)
    assert w.words == ("去年三月",) and w.rest == "我去了哪里"
    w = find("What did I do last week?", TODAY)
    assert w.words == ("last week",) and "week" not in w.rest
    # 上周一起: "together", not last Monday
    assert window("上周一起吃饭的人是谁") == ("2026-11-16", "2026-11-22")


def test_several_time_words_make_one_window_around_them():
    assert window("昨天和上周五") == ("2026-11-20", "2026-11-24")


def test_year_turns_and_leap_days():
    jan = date(2027, 1, 5)  # a Tuesday
    assert window("上个月", jan) == ("2026-12-01", "2026-12-31")
    assert window("上周", jan) == ("2026-12-28", "2027-01-03")
    assert window("last March", date(2026, 3, 10)) == ("2025-03-01", "2025-03-31")
    assert window("in March", date(2026, 3, 10)) == ("2026-03-01", "2026-03-31")
    assert window("2月30日") is None
    assert window("February 29, 2024") == ("2024-02-29", "2024-02-29")


def test_chinese_numbers():
    assert [cn_number(x) for x in ("一", "十", "十二", "二十三", "两", "7", "十十")] == [1, 10, 12, 23, 2, 7, None]


def test_now_is_a_day_or_a_one_line_error():
    assert today("2026-11-25") == TODAY
    assert today("2026-11-25T09:30:00Z") == TODAY
    assert today(TODAY) == TODAY
    assert today(None) == date.today()
    with pytest.raises(InputError, match="2026-11-25"):
        today("last tuesday")
    with pytest.raises(InputError):
        today("2026-13-01")
