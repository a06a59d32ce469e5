"""OSWorld's `_match_value_to_rule` (desktop_env/evaluators/metrics/utils.py), as check_json and
check_mp3_meta use it: a value against `{"method", "ref"}`.

Unlike `general.compare_with_method` this raises where OSWorld's raises (a regex on a non-string, an
unknown method), because OSWorld's callers turn that into a score of 0 for the whole metric.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Any

from harness.kernel.core import StateActError

ORDERINGS = {"eq", "ne", "le", "lt", "ge", "gt"}


def regex_flags(method: str) -> re.RegexFlag:
    """`re.IGNORECASE.MULTILINE` (or `re.I.M`): the flags named after the dots."""
    names = method.split(".")[1:]
    try:
        return functools.reduce(operator.or_, (getattr(re, n) for n in names), re.RegexFlag(0))
    except AttributeError as exc:
        raise StateActError(f"unknown regex flag in method {method!r}") from exc


def match_value_to_rule(value: Any, rule: dict) -> bool:
    """Whether `value` satisfies the rule; raises TypeError/ValueError where OSWorld's does."""
    method, ref = rule["method"], rule.get("ref")
    if method.startswith("re"):
        return re.search(ref, value, regex_flags(method)) is not None
    if method in ORDERINGS:
        return getattr(operator, method)(value, ref)
    if method.startswith("approx"):
        threshold = float(method.split(":")[1])
        try:
            value = float(value)
        except (ValueError, TypeError):
            return False
        return abs(value - ref) <= threshold
    if method == "spreadsheet_range":
        from tasks.metrics.sheets import range_between

        return range_between(str(value or ""), ref)
    if method.startswith("range."):
        low = getattr(operator, "l" + method[6])
        high = getattr(operator, "l" + method[7])
        return low(ref[0], value) and high(value, ref[1])
    if method in ("str_list_eq", "str_set_eq"):
        container = list if method == "str_list_eq" else set
        return container(value.strip("\"'").split(",")) == container(ref)
    raise StateActError(f"unknown comparison method {method!r}")
