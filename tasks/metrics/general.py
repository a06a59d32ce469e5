"""General OSWorld metrics: strings, lists, JSON, CSV records and text files.

Each metric returns a float in [0, 1]; a missing result (None) scores 0. `compare_with_method` is the
method vocabulary (`eq`, `approx:0.1`, `re.I`, ...) shared with the spreadsheet metrics.
"""

from __future__ import annotations

import csv
import difflib
import json
import operator
import re
import sqlite3
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric

COMPARATORS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
REGEX_FLAGS = {"I": re.I, "M": re.M, "S": re.S, "X": re.X, "A": re.A}
INCLUSIVE_BOUNDS = {"i", "c"}
EXCLUSIVE_BOUNDS = {"e", "o"}


def split_list_string(value: Any) -> list[str]:
    """A data-validation style list (`"a,b,c"`, quotes optional) as its stripped items."""
    if isinstance(value, list):
        return [str(item).strip() for item in value]
    return [item.strip() for item in str(value or "").strip().strip('"').split(",")]


def in_range(value: Any, method: str, ref: Any) -> bool:
    """`range.<xy>`: x and y say whether the lower and upper bound count (i/c) or not (e/o)."""
    kinds = method.split(".", 1)[1] if "." in method else "ii"
    if len(kinds) != 2 or not set(kinds) <= INCLUSIVE_BOUNDS | EXCLUSIVE_BOUNDS:
        raise StateActError(f"unknown range method {method!r}")
    low, high = ref
    above = value >= low if kinds[0] in INCLUSIVE_BOUNDS else value > low
    below = value <= high if kinds[1] in INCLUSIVE_BOUNDS else value < high
    return above and below


def compare_with_method(value: Any, method: str, ref: Any) -> bool:
    """Whether `value` satisfies `method` against `ref`."""
    try:
        if method in COMPARATORS:
            return bool(COMPARATORS[method](value, ref))
        if method.startswith("approx:"):
            return value is not None and abs(float(value) - float(ref)) <= float(method[7:])
        if method == "re" or method.startswith("re."):
            flags = 0
            for letter in method[3:]:
                flags |= REGEX_FLAGS[letter.upper()]
            return value is not None and re.search(ref, str(value), flags) is not None
        if method.startswith("range"):
            return in_range(value, method, ref)
        if method == "str_list_eq":
            return split_list_string(value) == split_list_string(ref)
        if method == "str_set_eq":
            return set(split_list_string(value)) == set(split_list_string(ref))
        if method == "spreadsheet_range":
            from tasks.metrics.sheets import range_between

            return range_between(str(value or ""), ref)
    except (TypeError, ValueError):
        return False
    except KeyError as exc:
        raise StateActError(f"unknown flag {exc.args[0]!r} in method {method!r}") from None
    raise StateActError(f"unknown comparison method {method!r}")


def read_text(path: str | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    return Path(path).read_text(encoding="utf-8", errors="replace")


def rule_value(rules: Any, key: str = "expected") -> Any:
    if not isinstance(rules, dict) or key not in rules:
        raise StateActError(f"the expected rule needs a {key!r} entry")
    return rules[key]


@metric("exact_match")
def exact_match(result: Any, rules: dict, **_: Any) -> float:
    return float(result == rule_value(rules))


@metric("literal_match")
def literal_match(result: Any, expected: Any, **options: Any) -> float:
    ignore_case = options.get("ignore_case", False)
    if options.get("type", "str") == "list":
        if not isinstance(result, list) or not isinstance(expected, list):
            return 0.0
        result, expected = [str(x) for x in result], [str(x) for x in expected]
        if ignore_case:
            result, expected = [x.lower() for x in result], [x.lower() for x in expected]
        return float(result == expected)
    left, right = str(result), str(expected)
    return float((left.lower() == right.lower()) if ignore_case else left == right)


@metric("check_include_exclude")
def check_include_exclude(result: Any, rules: dict, **_: Any) -> float:
    if result is None:
        return 0.0
    text = str(result)
    include = rules.get("include", []) if isinstance(rules, dict) else []
    exclude = rules.get("exclude", []) if isinstance(rules, dict) else []
    return float(all(s in text for s in include) and not any(s in text for s in exclude))


@metric("match_in_list")
def match_in_list(result: Any, rules: dict, **_: Any) -> float:
    return float(result in rule_value(rules))


@metric("is_in_list")
def is_in_list(result: Any, rules: dict, **_: Any) -> float:
    return float(result is not None and rule_value(rules) in result)


@metric("fuzzy_match")
def fuzzy_match(result: Any, rules: dict, **_: Any) -> float:
    if result is None:
        return 0.0
    return fuzz.ratio(str(result), str(rule_value(rules))) / 100.0


@metric("check_list")
def check_list(result: str | None, rules: dict, **_: Any) -> float:
    """Every `expect` regex matches some line of the file; no `unexpect` regex matches any."""
    text = read_text(result)
    if text is None:
        return 0.0
    lines = text.splitlines()
    for pattern in rules.get("expect", []):
        if not any(re.search(pattern, line) for line in lines):
            return 0.0
    for pattern in rules.get("unexpect", []):
        if any(re.search(pattern, line) for line in lines):
            return 0.0
    return 1.0


def record_matches(row: dict, wanted: dict) -> bool:
    return all(str(row.get(key)) == str(value) for key, value in wanted.items())


@metric("check_csv")
def check_csv(result: str | None, rules: dict, **_: Any) -> float:
    """Every `expect` record appears as a CSV row (matching its keys); no `unexpect` record does."""
    text = read_text(result)
    if text is None:
        return 0.0
    rows = list(csv.DictReader(text.splitlines()))
    if any(not any(record_matches(r, w) for r in rows) for w in rules.get("expect", [])):
        return 0.0
    if any(any(record_matches(r, w) for r in rows) for w in rules.get("unexpect", [])):
        return 0.0
    return 1.0


def dig(data: Any, keys: list) -> tuple[bool, Any]:
    """Follow `keys` into nested dicts/lists; (found, value)."""
    for key in keys:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, data


@metric("check_json")
def check_json(result: str | None, rules: dict, is_yaml: bool = False, **_: Any) -> float:
    """`expect` entries ({key path, method, ref}) hold in the JSON (or YAML) file; `unexpect` ones do not."""
    text = read_text(result)
    if text is None:
        return 0.0
    try:
        if is_yaml:
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception:
        return 0.0
    for entry in rules.get("expect", []):
        found, value = dig(data, entry["key"])
        if not found or not compare_with_method(value, entry.get("method", "eq"), entry.get("ref")):
            return 0.0
    for entry in rules.get("unexpect", []):
        found, value = dig(data, entry["key"])
        if found and compare_with_method(value, entry.get("method", "eq"), entry.get("ref")):
            return 0.0
    return 1.0


def value_contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return str(item) in container
    if isinstance(container, list | tuple | set):
        return item in container
    return container == item


@metric("check_direct_json_object")
def check_direct_json_object(result: Any, rules: dict, **_: Any) -> float:
    """Each expected key has the expected value; a list means "any of these". With
    `expect_in_result`, the result's value need only contain one of the expected values."""
    if isinstance(result, str):
        try:
            result = json.loads(result.strip())
        except json.JSONDecodeError:
            return 0.0
    if not isinstance(result, dict):
        return 0.0
    expected = rule_value(rules)
    in_result = rules.get("expect_in_result", False)
    for key, wanted in expected.items():
        if key not in result:
            return 0.0
        got = result[key]
        options = wanted if isinstance(wanted, list) else [wanted]
        if in_result:
            ok = any(value_contains(got, option) for option in options)
        else:
            ok = got == wanted or (isinstance(wanted, list) and got in wanted)
        if not ok:
            return 0.0
    return 1.0


@metric("check_json_settings")
def check_json_settings(result: str | None, rules: dict, **_: Any) -> float:
    """Every expected key of a JSON settings file has the expected value."""
    text = read_text(result)
    if text is None:
        return 0.0
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return 0.0
    expected = rule_value(rules)
    return float(all(key in data and data[key] == value for key, value in expected.items()))


@metric("check_json_keybindings")
def check_json_keybindings(result: str | None, rules: dict, **_: Any) -> float:
    """The expected binding is one of the entries of a VS Code keybindings.json (comments allowed)."""
    text = read_text(result)
    if text is None:
        return 0.0
    uncommented = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    try:
        data = json.loads(uncommented)
    except json.JSONDecodeError:
        return 0.0
    return float(isinstance(data, list) and rule_value(rules) in data)


@metric("diff_text_file")
def diff_text_file(result: str | None, expected: str | None, **_: Any) -> float:
    left, right = read_text(result), read_text(expected)
    if left is None or right is None:
        return 0.0
    return difflib.SequenceMatcher(a=left, b=right).ratio()


@metric("compare_text_file")
def compare_text_file(
    result: str | None,
    expected: str | None,
    ignore_blanks: bool = False,
    ignore_case: bool = False,
    **_: Any,
) -> float:
    left, right = read_text(result), read_text(expected)
    if left is None or right is None:
        return 0.0
    if ignore_blanks:
        left, right = re.sub(r"\s+", " ", left).strip(), re.sub(r"\s+", " ", right).strip()
    if ignore_case:
        left, right = left.lower(), right.lower()
    return float(left == right)


@metric("file_contains")
def file_contains(result: str | None, rules: dict, **_: Any) -> float:
    text = read_text(result)
    return float(text is not None and all(s in text for s in rule_value(rules)))


@metric("is_in_vm_clickboard")
def is_in_vm_clickboard(rules: dict, clipboard: Any, **_: Any) -> float:
    return float(clipboard is not None and str(rule_value(rules)) in str(clipboard))


@metric("is_utc_0")
def is_utc_0(result: Any, *_: Any, **__: Any) -> float:
    """`timedatectl status` output shows a +0000 time zone."""
    zone = re.search(r"Time zone:.*\(([^)]*)\)", str(result or ""))
    return float(zone is not None and "+0000" in zone[1])


@metric("run_sqlite3")
def run_sqlite3(result: str | None, rules: dict, **_: Any) -> float:
    """The rule's SQL query, run on the database file, returns a true first value."""
    if result is None or not Path(result).is_file():
        return 0.0
    conn = sqlite3.connect(f"file:{result}?mode=ro", uri=True)
    try:
        row = conn.execute(rule_value(rules, "sql")).fetchone()
    finally:
        conn.close()
    return float(bool(row and row[0]))


@metric("infeasible")
def infeasible(*_: Any, **__: Any) -> float:
    """Never called for scoring: `evaluate` scores infeasible tasks from the agent's final action."""
    return 0.0
