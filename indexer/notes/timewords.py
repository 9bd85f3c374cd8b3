"""Time words in a question (上周, 去年三月, last week, 3 days ago, May 3 2023) as a window of days, relative to a given today."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

RECENT_DAYS = 14  # 最近 / recently: the last two weeks, today included
FEW_DAYS = 6  # 前几天 / a few days ago: the six days before today


@dataclass(frozen=True)
class Window:
    """Days from start to end, both inclusive, and the words of the question that named them."""

    start: date
    end: date
    words: tuple[str, ...]
    rest: str  # the question without its time words (the words left to match the memories' text)

    def as_dict(self) -> dict:
        return {"from": self.start.isoformat(), "to": self.end.isoformat(), "words": list(self.words)}

    def label(self) -> str:
        span = self.start.isoformat() if self.start == self.end else f"{self.start} to {self.end}"
        return f"{span} ({', '.join(self.words)})"


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
               "a few": 3, "few": 3, "several": 3}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}

_CN_NUM = r"[0-9零〇一二两俩三四五六七八九十]{1,3}"
_EN_NUM = r"\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|" \
          r"eleven|twelve"
_M = "|".join(_MONTHS) + "|" + "|".join(m[:3] for m in _MONTHS) + r"|sept"
_WD = "|".join(_WEEKDAYS) + "|" + "|".join(w[:3] for w in _WEEKDAYS)
_YEAR = r"(?:19|20)\d{2}"
_NOT_VERB = r"(?!\s+(?:be|have|not|also|help|need|want|well|never|take|make|come|go)\b)"  # "this may be"


def cn_number(text: str) -> int | None:
    """一 → 1, 十二 → 12, 二十三 → 23, 12 → 12; None when it is not a number."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        if len(tens) > 1 or len(ones) > 1:
            return None
        t = _CN_DIGITS.get(tens, 1 if not tens else None)
        o = _CN_DIGITS.get(ones, 0 if not ones else None)
        return None if t is None or o is None else t * 10 + o
    return _CN_DIGITS.get(text) if len(text) == 1 else None


def _en_number(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _EN_NUMBERS[text]


def _month_of(name: str) -> int:
    key = name.lower()[:3]
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(key))


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def _week_span(today: date, weeks_back: int) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday() + 7 * weeks_back)
    return monday, monday + timedelta(days=6)


def _latest_month(today: date, month: int, strictly_before: bool) -> tuple[date, date]:
    """The most recent month of that name: this year's if it has begun (or, strictly, ended), else last year's."""
    year = today.year if month < today.month or (month == today.month and not strictly_before) else today.year - 1
    return _month_span(year, month)


def _latest_weekday(today: date, weekday: int, weeks_back: int | None) -> date:
    """weeks_back None: the most recent such day (today included); else that day of this (0) or an earlier week."""
    if weeks_back is None:
        return today - timedelta(days=(today.weekday() - weekday) % 7)
    return _week_span(today, weeks_back)[0] + timedelta(days=weekday)


def _months_back(today: date, n: int) -> tuple[date, date]:
    y, m = divmod(today.year * 12 + today.month - 1 - n, 12)
    return _month_span(y, m + 1)


def _day(y: int, m: int, d: int) -> tuple[date, date] | None:
    try:
        one = date(y, m, d)
    except ValueError:
        return None
    return one, one


def _past_year_of(today: date, month: int, day: int) -> int:
    """A month and day without a year: this year's unless it is still to come."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _today(t, m):
    return t, t


def _cn_rules():
    """(pattern, window maker) for Chinese; each maker takes (today, match) and gives (start, end) or None."""
    d = timedelta
    return [
        (r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", lambda t, m: _day(int(m[1]), int(m[2]), int(m[3]))),
        (r"(今年|去年|前年)?\s*(" + _CN_NUM + r")\s*月\s*(" + _CN_NUM + r")\s*[日号]",
         lambda t, m: _cn_month_day(t, m[1], m[2], m[3])),
        (r"(\d{4})\s*年\s*(" + _CN_NUM + r")\s*月(?:份)?", lambda t, m: _cn_month_of(int(m[1]), m[2])),
        (r"(今年|去年|前年)\s*(" + _CN_NUM + r")\s*月(?:份)?", lambda t, m: _cn_month_of(
            t.year - {"今年": 0, "去年": 1, "前年": 2}[m[1]], m[2])),
        (r"(\d{4})\s*年", lambda t, m: (date(int(m[1]), 1, 1), date(int(m[1]), 12, 31))),
        (r"大前天", lambda t, m: (t - d(3), t - d(3))),
        (r"前天", lambda t, m: (t - d(2), t - d(2))),
        (r"昨天|昨日|昨晚", lambda t, m: (t - d(1), t - d(1))),
        (r"今天|今日|今晚|今早", _today),
        (r"(?:过去|最近|近|前)\s*(" + _CN_NUM + r")\s*(天|日|周|个?星期|个?礼拜|个?月)(?!前)",
         lambda t, m: _cn_last_n(t, m[1], m[2])),
        (r"前几天|前些天|前阵子", lambda t, m: (t - d(FEW_DAYS), t - d(1))),
        (r"这几天|这两天|近几天|最近|近来|近期", lambda t, m: (t - d(RECENT_DAYS - 1), t)),
        (r"(" + _CN_NUM + r")\s*(天|日|周|个?星期|个?礼拜|个?月|年)(?:之|以)?前", lambda t, m: _cn_ago(t, m[1], m[2])),
        (r"上上(?:个)?(?:周|星期|礼拜)", lambda t, m: _week_span(t, 2)),
        (r"(上|这|本|这个)?(?:周|星期|礼拜)([一二三四五六日天末])(?![起直样共些点下])", lambda t, m: _cn_weekday(t, m[1], m[2])),
        (r"上(?:个)?(?:周|星期|礼拜)", lambda t, m: _week_span(t, 1)),
        (r"(?:这|本|这个)(?:周|星期|礼拜)", lambda t, m: (_week_span(t, 0)[0], t)),
        (r"上上个?月", lambda t, m: _months_back(t, 2)),
        (r"上(?:个)?月", lambda t, m: _months_back(t, 1)),
        (r"(?:这|本|这个)月", lambda t, m: (t.replace(day=1), t)),
        (r"今年", lambda t, m: (date(t.year, 1, 1), t)),
        (r"去年", lambda t, m: (date(t.year - 1, 1, 1), date(t.year - 1, 12, 31))),
        (r"前年", lambda t, m: (date(t.year - 2, 1, 1), date(t.year - 2, 12, 31))),
        (r"(?<![0-9零〇一二两三四五六七八九十年])(" + _CN_NUM + r")\s*月份?(?![0-9零〇一二两三四五六七八九十])",
         lambda t, m: _cn_bare_month(t, m[1])),
    ]


def _cn_month_day(today: date, year_word, month: str, day: str):
    mo, dy = cn_number(month), cn_number(day)
    if not mo or not dy:
        return None
    year = today.year - {"今年": 0, "去年": 1, "前年": 2}[year_word] if year_word else _past_year_of(today, mo, dy)
    return _day(year, mo, dy)


def _cn_month_of(year: int, month: str):
    mo = cn_number(month)
    return _month_span(year, mo) if mo and 1 <= mo <= 12 else None


def _cn_bare_month(today: date, month: str):
    mo = cn_number(month)
    return _latest_month(today, mo, False) if mo and 1 <= mo <= 12 else None


def _unit(word: str) -> str:
    word = word.lstrip("个")
    return {"天": "d", "日": "d", "周": "w", "星期": "w", "礼拜": "w", "月": "m", "年": "y"}[word]


def _cn_ago(today: date, num: str, unit: str):
    n = cn_number(num)
    return None if n is None else _ago(today, n, _unit(unit))


def _cn_last_n(today: date, num: str, unit: str):
    n = cn_number(num)
    return None if not n else _last_n(today, n, _unit(unit))


def _cn_weekday(today: date, which, day: str):
    wd = _CN_WEEKDAY[day]
    if day == "末":  # a weekend: Saturday and Sunday
        if which == "上":
            sat = _latest_weekday(today, 5, 1)
        elif which:
            sat = _latest_weekday(today, 5, 0)
        else:
            sat = _latest_weekday(today, 5, None) if today.weekday() < 5 else _latest_weekday(today, 5, 0)
        return sat, sat + timedelta(days=1)
    one = _latest_weekday(today, wd, {"上": 1, "这": 0, "本": 0, "这个": 0}.get(which) if which else None)
    return one, one


def _ago(today: date, n: int, unit: str):
    """N days / weeks / months / years ago: that day (one either side for weeks), that month, that year."""
    if unit == "d":
        one = today - timedelta(days=n)
        return one, one
    if unit == "w":
        mid = today - timedelta(days=7 * n)
        return mid - timedelta(days=3), min(today, mid + timedelta(days=3))
    if unit == "m":
        return _months_back(today, n)
    return date(today.year - n, 1, 1), date(today.year - n, 12, 31)


def _last_n(today: date, n: int, unit: str):
    """The last N days / weeks / months, today included."""
    days = {"d": 1, "w": 7, "m": 30, "y": 365}[unit] * n
    return today - timedelta(days=days - 1), today


def _en_rules():
    d = timedelta
    return [
        (rf"\bbetween\s+({_M})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\s+and\s+({_M})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
         rf"({_YEAR})\b", lambda t, m: _between(int(m[5]), m[1], int(m[2]), m[3], int(m[4]))),
        (rf"\b({_M})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+({_YEAR})\b",
         lambda t, m: _day(int(m[3]), _month_of(m[1]), int(m[2]))),
        (rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_M})\.?,?\s+({_YEAR})\b",
         lambda t, m: _day(int(m[3]), _month_of(m[2]), int(m[1]))),
        (r"(?<![\d-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d-])", lambda t, m: _day(int(m[1]), int(m[2]), int(m[3]))),
        (rf"\b(?:on\s+)?({_M})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d)",
         lambda t, m: _en_month_day(t, _month_of(m[1]), int(m[2]))),
        (rf"\b(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+of\s+({_M})\b(?!\s*,?\s*\d)",
         lambda t, m: _en_month_day(t, _month_of(m[2]), int(m[1]))),
        (rf"\b({_M})\.?,?\s+(?:of\s+)?({_YEAR})\b", lambda t, m: _month_span(int(m[2]), _month_of(m[1]))),
        (r"(?<![\d-])(\d{4})-(\d{1,2})(?![\d-])", lambda t, m: _month_span(int(m[1]), int(m[2]))
         if 1 <= int(m[2]) <= 12 else None),
        (rf"\b(?:in|during|of)\s+({_M})\s+(?:of\s+)?last\s+year\b",
         lambda t, m: _month_span(t.year - 1, _month_of(m[1]))),
        (rf"\blast\s+({_M})\b{_NOT_VERB}", lambda t, m: _latest_month(t, _month_of(m[1]), True)),
        (rf"\bthis\s+({_M})\b{_NOT_VERB}", lambda t, m: _month_span(t.year, _month_of(m[1]))),
        (rf"\bsince\s+({_M})\b", lambda t, m: (_latest_month(t, _month_of(m[1]), False)[0], t)),
        (rf"\b(?:in|during|through|throughout)\s+(?:early\s+|late\s+|mid-?\s*)?({_M})\b{_NOT_VERB}",
         lambda t, m: _latest_month(t, _month_of(m[1]), False)),
        (rf"\b(?:in|during|of)\s+(?:the\s+year\s+)?({_YEAR})\b",
         lambda t, m: (date(int(m[1]), 1, 1), date(int(m[1]), 12, 31))),
        (r"\bthe\s+day\s+before\s+yesterday\b", lambda t, m: (t - d(2), t - d(2))),
        (r"\byesterday\b|\blast\s+night\b", lambda t, m: (t - d(1), t - d(1))),
        (r"\btoday\b|\btonight\b|\bthis\s+morning\b", _today),
        (rf"\b({_EN_NUM})\s+(day|week|month|year)s?\s+ago\b", lambda t, m: _ago(t, _en_number(m[1]), m[2][0])),
        (rf"\b(?:in\s+|over\s+|during\s+)?the\s+(?:past|last)\s+({_EN_NUM})\s+(day|week|month|year)s?\b",
         lambda t, m: _last_n(t, _en_number(m[1]), m[2][0])),
        (r"\b(?:in\s+|over\s+|during\s+)?the\s+(?:past|last)\s+(day|week|month|year)\b",
         lambda t, m: _last_n(t, 1, m[1][0])),
        (r"\b(?:recently|lately|these\s+days|of\s+late)\b", lambda t, m: (t - d(RECENT_DAYS - 1), t)),
        (r"\bthe\s+other\s+day\b", lambda t, m: (t - d(FEW_DAYS), t - d(1))),
        (r"\bthe\s+week\s+before\s+last\b", lambda t, m: _week_span(t, 2)),
        (rf"\blast\s+({_WD})\b", lambda t, m: _en_weekday(t, m[1], 1)),
        (rf"\bthis\s+({_WD})\b", lambda t, m: _en_weekday(t, m[1], 0)),
        (rf"\bon\s+({_WD})\b", lambda t, m: _en_weekday(t, m[1], None)),
        (r"\blast\s+weekend\b", lambda t, m: _weekend(t, 1)),
        (r"\bthis\s+weekend\b|\bover\s+the\s+weekend\b|\bon\s+the\s+weekend\b", lambda t, m: _weekend(t, None)),
        (r"\blast\s+week\b", lambda t, m: _week_span(t, 1)),
        (r"\bthis\s+week\b", lambda t, m: (_week_span(t, 0)[0], t)),
        (r"\blast\s+month\b", lambda t, m: _months_back(t, 1)),
        (r"\bthis\s+month\b", lambda t, m: (t.replace(day=1), t)),
        (r"\blast\s+year\b", lambda t, m: (date(t.year - 1, 1, 1), date(t.year - 1, 12, 31))),
        (r"\bthis\s+year\b", lambda t, m: (date(t.year, 1, 1), t)),
    ]


def _between(year: int, m1: str, d1: int, m2: str, d2: int):
    a, b = _day(year, _month_of(m1), d1), _day(year, _month_of(m2), d2)
    return (a[0], b[1]) if a and b else None


def _en_month_day(today: date, month: int, day: int):
    return _day(_past_year_of(today, month, day), month, day) if 1 <= day <= 31 else None


def _en_weekday(today: date, name: str, weeks_back):
    wd = next(i for i, w in enumerate(_WEEKDAYS) if w.startswith(name.lower()[:3]))
    one = _latest_weekday(today, wd, weeks_back)
    return one, one


def _weekend(today: date, weeks_back):
    if weeks_back is None:
        sat = _latest_weekday(today, 5, None) if today.weekday() < 5 else _latest_weekday(today, 5, 0)
    else:
        sat = _latest_weekday(today, 5, weeks_back)
    return sat, sat + timedelta(days=1)


_RULES = [(re.compile(p, re.I), make) for p, make in _cn_rules() + _en_rules()]
_YEARED = re.compile(r"(?<!\d)\d{4}(?!\d)")


def find(text: str, today: date) -> Window | None:
    """The window the question's time words name (the union when it names several), or None.

    Rules are tried most specific first (去年三月 before 去年, May 3, 2023 before May 2023), and a
    piece of text taken by one rule is not read again by a later one.
    """
    if not isinstance(text, str) or not text:
        return None
    found: list[tuple[int, int, date, date, str]] = []
    for pattern, make in _RULES:
        for m in pattern.finditer(text):
            a, b = m.span()
            if any(a < y and x < b for x, y, *_ in found):
                continue
            got = make(today, m)
            if got is not None and got[0] <= got[1]:
                found.append((a, b, got[0], got[1], m.group(0).strip()))
    # a date with its year is the anchor: "last weekend before April 10, 2023" is not about this weekend
    dated = [f for f in found if _YEARED.search(f[4])]
    found = sorted(dated or found)
    if not found:
        return None
    rest = text
    for a, b, *_ in reversed(found):
        rest = rest[:a] + " " + rest[b:]
    return Window(start=min(f[2] for f in found), end=max(f[3] for f in found),
                  words=tuple(f[4] for f in found), rest=" ".join(rest.split()))
