"""OSWorld's `rule_relativeTime` getter: dates described in words ("next Monday", "10th next
month"), computed relative to now, substituted into the `{Year}`-style placeholders of the
expected values.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from harness.kernel.core import StateActError

WEEKDAYS = [name.lower() for name in calendar.day_name]
NUMBER_WORDS = {
    word: n
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}


def today_in(timezone: str) -> date:
    """Today's date in the named IANA timezone."""
    try:
        return datetime.now(ZoneInfo(timezone)).date()
    except (ZoneInfoNotFoundError, ValueError):
        raise StateActError(f"unknown timezone {timezone!r} in rule_relativeTime") from None


def add_months(day: date, months: int) -> date:
    """The first day of the month `months` after `day`'s month."""
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, 1)


def nth_weekday(month_start: date, weekday: int, nth: int) -> date:
    """The `nth` (1-based; -1 = last) given weekday in the month starting at `month_start`."""
    days = calendar.monthrange(month_start.year, month_start.month)[1]
    matches = [
        month_start + timedelta(days=i)
        for i in range(days)
        if (month_start + timedelta(days=i)).weekday() == weekday
    ]
    return matches[nth - 1] if nth > 0 else matches[nth]


def parse_count(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def resolve_phrase(phrase: str, today: date) -> date:
    """The date `phrase` describes, relative to `today`."""
    text = " ".join(phrase.lower().split())
    text = re.sub(r"\s+split$", "", text)
    fixed = {"today": 0, "tomorrow": 1, "yesterday": -1, "this month": 0}
    if text in fixed:
        return today + timedelta(days=fixed[text])
    if text == "next month":
        return add_months(today, 1)
    if m := re.fullmatch(r"(\d+)(?:st|nd|rd|th) (this|next) month", text):
        start = add_months(today, 1 if m[2] == "next" else 0)
        return start.replace(day=int(m[1]))
    if m := re.fullmatch(r"next week (\w+)", text):
        next_monday = today + timedelta(days=7 - today.weekday())
        return next_monday + timedelta(days=WEEKDAYS.index(m[1]))
    if m := re.fullmatch(r"this week (\w+)", text):
        return today - timedelta(days=today.weekday()) + timedelta(days=WEEKDAYS.index(m[1]))
    if m := re.fullmatch(r"next (\w+)", text):
        # The next such weekday strictly after today.
        ahead = (WEEKDAYS.index(m[1]) - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead)
    if m := re.fullmatch(r"(\w+) (\w+) (\w+|\d+) months? later", text):
        month = add_months(today, parse_count(m[3]))
        return nth_weekday(month, WEEKDAYS.index(m[2]), ORDINAL_WORDS[m[1]])
    if m := re.fullmatch(r"(\w+|\d+) days? later", text):
        return today + timedelta(days=parse_count(m[1]))
    raise ValueError(phrase)


def format_placeholders(template: str, day: date) -> str:
    """Replace OSWorld's date placeholders in `template` with `day`'s parts."""
    values = {
        "{DoW}": day.strftime("%a"),
        "{DoWFull}": day.strftime("%A"),
        "{Month}": day.strftime("%b"),
        "{MonthFull}": day.strftime("%B"),
        "{month}": day.strftime("%B").lower(),
        "{Month0D}": day.strftime("%m"),
        "{MonthD}": str(day.month),
        "{Day0D}": day.strftime("%d"),
        "{DayD}": str(day.day),
        "{Year}": day.strftime("%Y"),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def substitute(value: Any, day: date) -> Any:
    """`format_placeholders` applied to every string inside `value`."""
    if isinstance(value, str):
        return format_placeholders(value, day)
    if isinstance(value, list):
        return [substitute(item, day) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, day) for key, item in value.items()}
    return value


def rule_relative_time(rules: dict, today: date | None = None) -> dict:
    """The `rules` object with its `expected` placeholders filled from the `relativeTime` dates.

    With only `from`, every value gets the `from` date. With `from` and `to`, the keys named `from`
    and `to` get their own dates; a `split` phrase means the expected keys come in two halves, the
    first for `from` and the second for `to` (pick-up and drop-off fields).
    """
    relative = rules.get("relativeTime") or {}
    if "from" not in relative:
        raise StateActError("rule_relativeTime needs relativeTime.from")
    today = today or today_in(rules.get("timezone", "UTC"))
    try:
        start = resolve_phrase(relative["from"], today)
        end = resolve_phrase(relative["to"], today) if "to" in relative else None
    except (ValueError, KeyError, IndexError) as exc:
        raise StateActError(
            f"rule_relativeTime cannot read the date phrase {exc.args[0]!r}"
        ) from None
    expected = rules.get("expected", {})
    if end is None or not isinstance(expected, dict):
        filled = substitute(expected, start)
    elif relative["from"].strip().lower().endswith("split"):
        keys = list(expected)
        half = len(keys) // 2
        filled = {
            k: substitute(expected[k], start if i < half else end) for i, k in enumerate(keys)
        }
    else:
        filled = {k: substitute(v, end if k == "to" else start) for k, v in expected.items()}
    return {**rules, "expected": filled}
