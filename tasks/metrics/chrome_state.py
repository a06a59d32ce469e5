"""Chrome-state metrics: the active tab, open tabs, bookmarks, history, cookies, font size and
desktop shortcuts, scored on what the Chrome getters return, as OSWorld's chrome metrics do.

OSWorld's oddities kept: URLs compare after dropping `www.` anywhere in the host and a lone `/`
path (`compare_urls`), an unknown rule type scores 0 for tab checks but is an error for the others.
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any
from urllib.parse import urlparse, urlunparse

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric


def normalize_url(url: str) -> str:
    parsed = urlparse(url)
    return urlunparse(
        parsed._replace(
            scheme=(parsed.scheme or "http").lower(),
            netloc=parsed.netloc.lower().replace("www.", ""),
            path=parsed.path if parsed.path != "/" else "",
        )
    )


def compare_urls(first: str | None, second: str | None) -> bool:
    """OSWorld's URL equality: scheme defaults to http, host lowercased without `www.`."""
    if first is None or second is None:
        return first == second
    return normalize_url(first) == normalize_url(second)


def same_items(expected: list, actual: list, equal) -> bool:
    """Same length, and every expected item equals some actual one (OSWorld's are_lists_equal)."""
    return len(expected) == len(actual) and all(
        any(equal(item, other) for other in actual) for item in expected
    )


def tab_url(info: Any) -> str | None:
    return info.get("url") if isinstance(info, dict) else info


def rule_error(name: str, rule: Any) -> StateActError:
    kind = rule.get("type") if isinstance(rule, dict) else rule
    return StateActError(f"{name} has no rule of type {kind!r}")


@metric("is_expected_active_tab")
def is_expected_active_tab(result: Any, rule: dict, **_: Any) -> float:
    """The active tab's URL equals the rule's `url` (compare_urls)."""
    if not result:
        return 0.0
    if rule.get("type") != "url":
        return 0.0
    return float(compare_urls(rule["url"], tab_url(result)))


def without_query(url: str) -> str:
    return urlunparse(urlparse(url)._replace(query=""))


@metric("is_expected_active_tab_approximate")
def is_expected_active_tab_approximate(result: Any, rule: dict, **_: Any) -> float:
    """The active tab's URL equals the rule's `url` once both lose their query strings."""
    if not result or rule.get("type") != "url":
        return 0.0
    actual = tab_url(result)
    if not isinstance(actual, str):
        return 0.0
    return float(without_query(rule["url"]) == without_query(actual))


@metric("is_expected_url_pattern_match")
def is_expected_url_pattern_match(result: Any, rules: dict, **_: Any) -> float:
    """Every regex of `expected` is found in the URL (a string, or a dict's `url`)."""
    if not result:
        return 0.0
    url = result if isinstance(result, str) else tab_url(result)
    if not isinstance(url, str):
        return 0.0
    return float(all(re.search(pattern, url) for pattern in rules["expected"]))


@metric("is_expected_search_query")
def is_expected_search_query(result: Any, rules: dict, **_: Any) -> float:
    """The active tab's URL matches `expect.pattern`."""
    if not result:
        return 0.0
    return float(bool(re.search(rules["expect"]["pattern"], result["url"])))


@metric("is_expected_tabs")
def is_expected_tabs(result: Any, rule: dict, **_: Any) -> float:
    """The open tabs' URLs are the rule's `urls`, in any order (compare_urls)."""
    if not result or rule.get("type") != "url":
        return 0.0
    return float(same_items(rule["urls"], [tab["url"] for tab in result], compare_urls))


def bar_children(bookmarks: dict, kind: str) -> list[dict]:
    children = bookmarks["bookmark_bar"]["children"]
    return [child for child in children if child.get("type") == kind]


@metric("is_expected_bookmarks")
def is_expected_bookmarks(result: Any, rule: dict, **_: Any) -> float:
    """The bookmark bar's folder names or site URLs, or the 'Liked Authors' folder's URLs (each
    entry of `urls` may list alternatives), are as the rule says."""
    if not result:
        return 0.0
    kind = rule.get("type")
    if kind == "bookmark_bar_folders_names":
        names = {child["name"] for child in bar_children(result, "folder")}
        return float(names == set(rule["names"]))
    if kind == "bookmark_bar_websites_urls":
        urls = {child["url"] for child in bar_children(result, "url")}
        return float(urls == set(rule["urls"]))
    if kind == "liked_authors_websites_urls":
        folder = next(
            (f for f in bar_children(result, "folder") if f.get("name") == "Liked Authors"), None
        )
        if folder is None:
            return 0.0
        liked = {child["url"] for child in folder.get("children", []) if child.get("type") == "url"}
        choices = [[url] if isinstance(url, str) else url for url in rule["urls"]]
        return float(any(set(pick) == liked for pick in product(*choices)))
    raise rule_error("is_expected_bookmarks", rule)


@metric("is_cookie_deleted")
def is_cookie_deleted(result: Any, rule: dict, **_: Any) -> float:
    """No cookie row's host (its second column) equals one of the rule's `domains`."""
    if rule.get("type") != "domains":
        raise rule_error("is_cookie_deleted", rule)
    if result is None:  # no Cookies database: OSWorld's metric fails on it too, scoring 0
        raise StateActError("is_cookie_deleted: there are no Chrome cookies to read")
    hosts = [row[1] for row in result]
    return float(not any(compare_urls(d, host) for d in rule["domains"] for host in hosts))


@metric("check_history_deleted")
def check_history_deleted(result: Any, rule: dict, **_: Any) -> float:
    """No history row's URL (its first column) contains one of the rule's `keywords`."""
    if rule.get("type") != "keywords":
        raise rule_error("check_history_deleted", rule)
    if result is None:  # no History database: OSWorld's metric fails on it too, scoring 0
        raise StateActError("check_history_deleted: there is no Chrome history to read")
    urls = [row[0] for row in result]
    return float(not any(keyword in url for keyword in rule["keywords"] for url in urls))


@metric("check_font_size")
def check_font_size(result: Any, rule: dict, **_: Any) -> float:
    """Chrome's default font size equals `value`, or lies strictly between `min` and `max`."""
    size = result["default_font_size"]
    if rule.get("type") == "value":
        return float(size == rule["value"])
    if rule.get("type") == "range":
        return float(rule["min"] < size < rule["max"])
    raise rule_error("check_font_size", rule)


@metric("is_added_to_steam_cart")
def is_added_to_steam_cart(result: Any, rule: dict, **_: Any) -> float:
    """Every item of the rule appears in the page's text content."""
    content = result["content"]
    return float(all(item in content for item in rule["items"]))


def desktop_field(content: str, key: str) -> list[str]:
    return [line[len(key) + 1 :] for line in content.split("\n") if line.startswith(f"{key}=")]


@metric("is_shortcut_on_desktop")
def is_shortcut_on_desktop(result: Any, rule: dict, **_: Any) -> float:
    """A desktop shortcut's Name (or Exec) equals the rule's, or one contains the other (the
    name case-insensitively)."""
    kind = rule.get("type")
    if kind not in ("name", "exec"):
        raise rule_error("is_shortcut_on_desktop", rule)
    key = "Name" if kind == "name" else "Exec"
    wanted = rule[kind]
    for content in (result or {}).values():
        if f"{key}={wanted}\n" in content:
            return 1.0
        for actual in desktop_field(content, key):
            a, w = (actual.lower(), wanted.lower()) if kind == "name" else (actual, wanted)
            if a == w or w in a or a in w:
                return 1.0
    return 0.0
