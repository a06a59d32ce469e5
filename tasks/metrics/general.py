"""General OSWorld metrics: strings, lists, JSON, CSV records and text files.

Each metric returns a float in [0, 1]; a missing result (None) scores 0. `compare_with_method` is
the method vocabulary (`eq`, `approx:0.1`, `re.I`, ...) shared with the spreadsheet metrics.
"""

from __future__ import annotations

import csv
import difflib
import json
import operator
import re
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from sandboxes.agent_files import open_sqlite
from tasks.metrics.registry import metric
from tasks.metrics.rule_match import match_value_to_rule

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
    """`str` (default): equal as strings; `list`: both lists or tuples, equal item by item as
    strings."""
    kind, ignore_case = options.get("type", "str"), options.get("ignore_case", False)
    fold = (lambda x: str(x).lower()) if ignore_case else str
    if kind == "str":
        return float(fold(result) == fold(expected))
    if kind == "list":
        sequences = (list, tuple)
        if type(result) not in sequences or type(expected) not in sequences:
            return 0.0
        return float([fold(x) for x in result] == [fold(x) for x in expected])
    raise StateActError(f"literal_match has no type {kind!r}; choose str or list")


@metric("check_include_exclude")
def check_include_exclude(result: Any, rules: dict, **_: Any) -> float:
    """Every `include` string is in the result and no `exclude` one (`in`: substring or item)."""
    if result is None:
        return 0.0
    include, exclude = rules.get("include", []), rules.get("exclude", [])
    return float(all(s in result for s in include) and all(s not in result for s in exclude))


@metric("match_in_list")
def match_in_list(result: Any, rules: dict, **_: Any) -> float:
    return float(result in rule_value(rules))


@metric("is_in_list")
def is_in_list(result: Any, rules: dict, **_: Any) -> float:
    return float(result is not None and rule_value(rules) in result)


@metric("fuzzy_match")
def fuzzy_match(result: Any, rules: dict, **_: Any) -> float:
    return fuzz.ratio(result, rule_value(rules)) / 100.0


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
    """Every wanted key is in the row with an equal value (CSV values are strings: 30 is not
    "30")."""
    return all(key in row and row[key] == value for key, value in wanted.items())


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
    """`expect` entries ({key path, method, ref}) hold in the JSON (or YAML) file; `unexpect`
    ones do not (a missing key reads as None there). Any error in a rule scores 0, as in
    OSWorld."""
    text = read_text(result)
    if text is None:
        return 0.0
    try:
        if is_yaml:
            import yaml

            data = yaml.safe_load(text)
            if data is None:
                return 0.0
        else:
            data = json.loads(text)
    except Exception:  # noqa: BLE001 -- an unparsable file scores 0
        return 0.0
    passed = True
    try:
        for entry in rules.get("expect", {}):
            found, value = dig(data, entry["key"])
            if not found:
                return 0.0
            passed = passed and match_value_to_rule(value, entry)
        for entry in rules.get("unexpect", {}):
            _, value = dig(data, entry["key"])
            passed = passed and not match_value_to_rule(value, entry)
    except (TypeError, ValueError, KeyError, re.error):
        return 0.0
    return float(passed)


def expected_values_found(result: dict, expected: dict) -> bool:
    """`expect_in_result`: a list lists acceptable values (one in the result's list, or equal to its
    string); a string must be part of the result's string; other kinds fail."""
    for key, wanted in expected.items():
        got = result.get(key)
        if isinstance(wanted, list):
            if not any(
                (isinstance(got, list) and option in got)
                or (isinstance(got, str) and option == got)
                for option in wanted
            ):
                return False
        elif isinstance(wanted, str):
            if wanted not in got:
                return False
        else:
            return False
    return True


@metric("check_direct_json_object")
def check_direct_json_object(result: Any, rules: dict, **_: Any) -> float:
    """Each expected key has the expected value (the result may be a JSON string, single quotes
    read as double). `ignore_list_order` inside `expected` sorts the lists; with
    `expect_in_result` see `expected_values_found`. Any error scores 0."""
    try:
        if isinstance(result, str):
            result = json.loads(result.strip().replace("'", '"'))
        if result is None:
            return 0.0
        expected = rules.get("expected", {})
        if expected and any(v == "__EVALUATION_FAILED__" for v in expected.values()):
            return 0.0
        expected = rules["expected"]
        if rules.get("expect_in_result", False):
            return float(expected_values_found(result, expected))
        for key, wanted in expected.items():
            if expected.get("ignore_list_order", False):
                if sorted(wanted) != sorted(result.get(key)):
                    return 0.0
            elif wanted != result.get(key):
                return 0.0
        return 1.0
    except Exception:  # noqa: BLE001 -- OSWorld scores any failure here 0
        return 0.0


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
    """The expected binding is one of the entries of a VS Code keybindings.json (comments
    allowed)."""
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
    """difflib's similarity ratio of the two files' lists of lines."""
    if result is None or expected is None:
        return 0.0
    left, right = Path(result).read_text(), Path(expected).read_text()
    return difflib.SequenceMatcher(a=left.splitlines(), b=right.splitlines()).ratio()


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
    """The expected text (or each of a list of texts) is in the clipboard text."""
    expected = rule_value(rules)
    if isinstance(expected, list):
        return float(all(item in clipboard for item in expected))
    return float(expected in clipboard)


@metric("is_utc_0")
def is_utc_0(result: Any, *_: Any, **__: Any) -> float:
    """The fourth line of `timedatectl status` output (the time zone) ends in "+0000)"."""
    return float(result.split("\n")[3].endswith("+0000)"))


@metric("run_sqlite3")
def run_sqlite3(result: str | None, rules: dict, **_: Any) -> float:
    """The first value the rule's SQL query returns on the database file, as the score."""
    if result is None or not Path(result).is_file():
        return 0.0
    with open_sqlite(Path(result)) as conn:  # the agent's database: read-only, with a deadline
        row = conn.execute(rule_value(rules, "sql")).fetchone()
    # OSWorld returns the first value itself (NULL as 0); a value above 1 is out of range.
    return float(row[0] or 0) if row else 0.0


@metric("infeasible")
def infeasible(*_: Any, **__: Any) -> float:
    """Never called for scoring: `evaluate` scores infeasible tasks from the agent's final
    action."""
    return 0.0
