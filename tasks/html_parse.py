"""OSWorld's `active_tab_html_parse`: named values read from the active tab's page.

The spec's `category` says how: `class` (texts of elements by class name, by rank, or whether
given texts are among them), `class&url` (which expected filter labels are shown or named in the
URL, and whether any other is), `xpath` (an element's text), `input` (an input's value) and
`label` (the text of the first element showing a given text). The page is read in the sandbox
by a few generic queries (`sandbox_scripts/chrome_cdp.py`, op `html_parse`); the values are
assembled here from their answers, with OSWorld's rules: a missing element gives "", a key is
set once, `is_other_exist` is False unless an unexpected text shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.kernel.core import StateActError

Query = tuple[str, str]
"""(kind, selector); kinds: texts, direct_texts, h3_texts, li_spans, label, xpath, input."""
Lookup = Callable[[str, str], Any]

LIST_KINDS = {"texts", "direct_texts", "h3_texts", "li_spans"}
CATEGORIES = ("class", "class&url", "xpath", "input", "label")


def table(spec: dict, name: str) -> dict:
    value = spec.get(name) or {}
    if not isinstance(value, dict):
        raise StateActError(f"active_tab_html_parse: '{name}' must be an object")
    return value


def ranked(values: list, order_key: Any) -> Any:
    """The `order_key`-th value, or "" when there are not that many."""
    index = int(order_key)
    return values[index] if len(values) > index else ""


def class_values(spec: dict, lookup: Lookup) -> dict:
    found: dict[str, Any] = {}
    ranked_tables = (
        ("class_multiObject", "texts"),
        ("class_multiObject_child", "direct_texts"),
        ("class_multiObject_only_child", "h3_texts"),
    )
    for name, kind in ranked_tables:
        for class_name, keys in table(spec, name).items():
            texts = lookup(kind, "." + class_name)
            for order_key, key in keys.items():
                found[key] = ranked(texts, order_key)
    for class_name, wanted in table(spec, "class_multiObject_search_exist").items():
        texts = lookup("texts", "." + class_name)
        for text in wanted:
            if text != "is_other_exist":
                found[text] = text in texts
        if "is_other_exist" in wanted:
            if any(text not in wanted for text in texts):
                found["is_other_exist"] = True
            found.setdefault("is_other_exist", False)
    for class_name, key in table(spec, "class_singleObject").items():
        texts = lookup("texts", "." + class_name)
        found[key] = texts[0] if texts else ""
    return found


def shown_filters(found: dict, wanted: list, texts: list) -> None:
    """`class&url`: each wanted label shown (case-insensitively) is True; any shown text that is
    in none of the wanted labels sets `is_other_exist`."""
    for label in wanted:
        if any(label.lower() == text.lower() for text in texts):
            found[label.lower()] = True
    if any(all(text.lower() not in label.lower() for label in wanted) for text in texts):
        found["is_other_exist"] = True
    found.setdefault("is_other_exist", False)


def class_and_url_values(spec: dict, lookup: Lookup, page_url: str) -> dict:
    found: dict[str, Any] = {}
    for name, kind in (("class_multiObject", "texts"), ("class_multiObject_li", "li_spans")):
        for class_name, wanted in table(spec, name).items():
            shown_filters(found, list(wanted), lookup(kind, "." + class_name))
    url = page_url.lower()
    for key in spec.get("url_include_expected") or []:
        found.setdefault(key.lower(), key.lower() in url)
    for part, key in table(spec, "url_include_expected_multichoice").items():
        found.setdefault(key.lower(), part.lower() in url)
    return found


def assemble(spec: dict, lookup: Lookup, page_url: str) -> dict:
    """The getter's value for the page at `page_url`, asking `lookup` what the page shows."""
    category = spec.get("category")
    if category == "class":
        return class_values(spec, lookup)
    if category == "class&url":
        return class_and_url_values(spec, lookup, page_url)
    if category == "xpath":
        return {key: lookup("xpath", path) for path, key in table(spec, "xpathObject").items()}
    if category == "input":
        return {key: lookup("input", path) for path, key in table(spec, "inputObject").items()}
    if category == "label":
        return {key: lookup("label", text) for text, key in table(spec, "labelObject").items()}
    raise StateActError(
        f"active_tab_html_parse: 'category' must be one of {', '.join(CATEGORIES)}, "
        f"not {category!r}"
    )


def queries(spec: dict) -> list[Query]:
    """The page reads `assemble` needs for `spec`, each once, in order."""
    asked: dict[Query, None] = {}

    def record(kind: str, selector: str) -> Any:
        asked[(kind, selector)] = None
        return [] if kind in LIST_KINDS else ""

    assemble(spec, record, "")
    return list(asked)


def from_answers(spec: dict, answers: list, page_url: str) -> dict:
    """`assemble` over the sandbox's answers to `queries(spec)`, in the same order."""
    asked = queries(spec)
    if len(answers) != len(asked):
        raise StateActError("the page answered a different number of queries than were asked")
    by_query = dict(zip(asked, answers, strict=True))
    return assemble(spec, lambda kind, selector: by_query[(kind, selector)], page_url)
