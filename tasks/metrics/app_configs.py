"""Application-state metrics: Thunderbird prefs and filters, VS Code config and extensions,
archives.

Conventions as elsewhere: a missing result file scores 0.0, a malformed rule raises StateActError.
"""

from __future__ import annotations

import ast
import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.documents import UnreadableFile
from tasks.metrics.general import compare_with_method, read_text, rule_value
from tasks.metrics.registry import metric

USER_PREF = re.compile(r'^\s*user_pref\(\s*("(?:[^"\\]|\\.)*")\s*,\s*(.*?)\s*\)\s*;\s*$')
FILTER_LINE = re.compile(r'^(\w+)="(.*)"$')


def parse_prefs(text: str) -> dict[str, Any]:
    """The `user_pref("name", value);` lines of a Mozilla prefs.js as a dict of JSON values."""
    prefs: dict[str, Any] = {}
    for line in text.splitlines():
        found = USER_PREF.match(line)
        if not found:
            continue
        try:
            prefs[json.loads(found.group(1))] = json.loads(found.group(2))
        except json.JSONDecodeError:
            prefs[json.loads(found.group(1))] = found.group(2)  # keep what Mozilla wrote, as text
    return prefs


def pref_checks(rules: dict, key: str) -> dict[str, dict]:
    checks = rules.get(key, {})
    if not isinstance(checks, dict) or any(not isinstance(c, dict) for c in checks.values()):
        raise StateActError(
            f"check_thunderbird_prefs '{key}' must map pref names to {{method, ref}}"
        )
    return checks


def pref_holds(prefs: dict, name: str, check: dict) -> bool:
    return name in prefs and compare_with_method(
        prefs[name], check.get("method", "eq"), check.get("ref")
    )


@metric("check_thunderbird_prefs")
def check_thunderbird_prefs(result: str | None, rules: dict, **_: Any) -> float:
    """Every `expect` pref satisfies its {method, ref}; no `unexpect` pref does."""
    if not isinstance(rules, dict):
        raise StateActError("check_thunderbird_prefs needs an 'expect' rule object")
    expect, unexpect = pref_checks(rules, "expect"), pref_checks(rules, "unexpect")
    text = read_text(result)
    if text is None:
        return 0.0
    prefs = parse_prefs(text)
    return float(
        all(pref_holds(prefs, n, c) for n, c in expect.items())
        and not any(pref_holds(prefs, n, c) for n, c in unexpect.items())
    )


def parse_filters(text: str) -> list[dict[str, list[str]]]:
    """The filters of a msgFilterRules.dat: each `name=` line starts one; keys may repeat."""
    filters: list[dict[str, list[str]]] = []
    for line in text.splitlines():
        found = FILTER_LINE.match(line.strip())
        if not found:
            continue
        key, value = found.group(1), found.group(2).replace('\\"', '"')
        if key == "name":
            filters.append({})
        if filters:  # version= and logging= come before the first filter
            filters[-1].setdefault(key, []).append(value)
    return filters


def filter_matches(found: dict[str, list[str]], wanted: dict) -> bool:
    """A listed value must equal the filter's values for that key; a single one be among them."""
    for key, value in wanted.items():
        have = found.get(key, [])
        if isinstance(value, list) and have != [str(v) for v in value]:
            return False
        if not isinstance(value, list) and str(value) not in have:
            return False
    return True


@metric("check_thunderbird_filter")
def check_thunderbird_filter(result: str | None, rules: dict, **_: Any) -> float:
    """Every `expect` filter exists in msgFilterRules.dat; no `unexpect` filter does."""
    if not isinstance(rules, dict) or not isinstance(rules.get("expect", []), list):
        raise StateActError("check_thunderbird_filter needs an 'expect' list of filters")
    text = read_text(result)
    if text is None:
        return 0.0
    filters = parse_filters(text)
    present = [
        any(filter_matches(f, wanted) for f in filters) for wanted in rules.get("expect", [])
    ]
    absent = [
        not any(filter_matches(f, wanted) for f in filters) for wanted in rules.get("unexpect", [])
    ]
    return float(all(present) and all(absent))


def json_contains(container: Any, part: Any) -> bool:
    """`part`'s keys (recursively) are in `container` with equal values."""
    if isinstance(part, dict):
        return isinstance(container, dict) and all(
            k in container and json_contains(container[k], v) for k, v in part.items()
        )
    return container == part


def loose_json(text: str) -> Any:
    """JSON, or None when the text is not JSON (VS Code settings allow // comments)."""
    uncommented = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("//"))
    try:
        return json.loads(uncommented)
    except json.JSONDecodeError:
        return None


@metric("compare_config")
def compare_config(
    result: str | None, rules: dict, containment_ok: bool = False, **_: Any
) -> float:
    """The config file's text equals `expected` (both compared as JSON when they parse as JSON).

    With `containment_ok` the expected settings only need to be among the file's settings (or
    the expected text to occur in the file).
    """
    expected = str(rule_value(rules))
    text = read_text(result)
    if text is None:
        return 0.0
    got, want = loose_json(text), loose_json(expected)
    if want is not None and got is not None:
        return float(json_contains(got, want) if containment_ok else got == want)
    if containment_ok:
        return float(expected.strip() in text)
    return float(text.strip() == expected.strip())


@metric("is_extension_installed")
def is_extension_installed(result: Any, rules: dict, **_: Any) -> float:
    """A command's output (`code --list-extensions`, `ls`) contains, or not, the expected name."""
    kind, expected = rules.get("type", "contain"), str(rule_value(rules))
    output = "" if result is None else str(result)
    if kind == "contain":
        return float(expected in output)
    if kind == "not_contain":
        return float(expected not in output)
    raise StateActError(
        f"is_extension_installed rule type {kind!r} is not 'contain' or 'not_contain'"
    )


def archive_members(path: str, into: Path) -> dict[str, Path]:
    """Extract a zip or tar archive's regular files under `into`; {member name: extracted path}."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [i.filename for i in archive.infolist() if not i.is_dir()]
            archive.extractall(into)
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            names = [m.name for m in archive.getmembers() if m.isfile()]
            archive.extractall(
                into, members=[m for m in archive.getmembers() if m.isfile()], filter="data"
            )
    else:
        raise UnreadableFile(f"{Path(path).name} is not a zip or tar archive")
    return {name.removeprefix("./"): into / name for name in names}


def relative_to_folder(members: dict[str, Path], folder: str | None) -> dict[str, Path]:
    """Member names inside `folder` (the archive's top folder, when the task names one)."""
    if not folder:
        return members
    prefix = folder.strip("/") + "/"
    return {name.removeprefix(prefix): path for name, path in members.items()}


@metric("is_expected_installed_extensions")
def is_expected_installed_extensions(result: Any, rules: dict, **_: Any) -> float:
    """Every expected extension name is among the installed ones."""
    expected = rule_value(rules)
    installed = set(result or [])
    return float(
        all(name in installed for name in (expected if isinstance(expected, list) else [expected]))
    )


DUMP_SCRIPT = Path(__file__).parents[1] / "sandbox_scripts" / "atspi_tree.py"
A11Y_URL = "https://accessibility.ubuntu.example.org/ns/"


def _dump_namespaces() -> dict[str, str]:
    """OSWorld's namespaces of the accessibility-tree dump (its "ubuntu" map), read from the
    dump script itself (it runs in the sandbox and cannot be imported here), so the dump and the
    rules that query it share one map."""
    for node in ast.parse(DUMP_SCRIPT.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NAMESPACES":
            return {name: A11Y_URL + path for name, path in ast.literal_eval(node.value).items()}
    raise RuntimeError(f"{DUMP_SCRIPT} defines no NAMESPACES")


A11Y_NS = _dump_namespaces()


def accessibility_elements(tree: Any, rule: dict) -> list:
    """The elements a rule's `xpath` (preferred) or CSS `selectors` pick."""
    if "xpath" in rule:
        try:
            return tree.xpath(rule["xpath"], namespaces=A11Y_NS)
        except etree.XPathError as exc:
            raise StateActError(f"bad xpath {rule['xpath']!r} ({exc})") from None
    if "selectors" in rule:
        from lxml.cssselect import CSSSelector

        return CSSSelector(", ".join(rule["selectors"]), namespaces=A11Y_NS)(tree)
    raise StateActError("a check_accessibility_tree rule needs an 'xpath' or 'selectors'")


def accessibility_rule_score(tree: Any, rule: dict) -> float:
    """0 when nothing is picked; with `text`, the best match of a picked element's text (equality,
    or rapidfuzz's ratio when `exact` is false); else 1."""
    elements = accessibility_elements(tree, rule)
    if not elements:
        return 0.0
    if "text" not in rule:
        return 1.0
    wanted = rule["text"]
    if rule["exact"]:
        return float(any(wanted == (e.text or None) for e in elements))
    return max(fuzz.ratio(wanted, e.text or None) / 100 for e in elements)


@metric("check_accessibility_tree")
def check_accessibility_tree(result: str | None, rules: Any, **_: Any) -> float:
    """The product of the rules' scores (see `accessibility_rule_score`) on the tree's XML."""
    rule_list = rules if isinstance(rules, list) else [rules]
    if not result:
        return 0.0
    parser = etree.XMLParser(recover=True, huge_tree=True)
    tree = etree.fromstring(result.encode("utf-8"), parser)
    if tree is None:
        return 0.0
    score = 1.0
    for rule in rule_list:
        score *= accessibility_rule_score(tree, rule)
    return score
