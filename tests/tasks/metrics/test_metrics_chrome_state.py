"""Chrome-state metrics on generated getter results, with OSWorld's rules from the public tasks."""

from __future__ import annotations

import pytest

from harness.kernel.core import StateActError
from tasks.metrics import get_metric


def score(name: str, result, rule) -> float:
    return get_metric(name)(result, rule)


def test_active_tab_urls_compare_as_osworld():
    rule = {"type": "url", "url": "https://www.drugs.com/npc/"}
    assert score("is_expected_active_tab", {"url": "https://drugs.com/npc/"}, rule) == 1.0
    assert score("is_expected_active_tab", "HTTPS://WWW.DRUGS.COM/npc/", rule) == 1.0
    assert score("is_expected_active_tab", {"url": "https://drugs.com/npc"}, rule) == 0.0
    assert score("is_expected_active_tab", None, rule) == 0.0
    assert score("is_expected_active_tab", "x", {"type": "title"}) == 0.0
    approx = {"type": "url", "url": "chrome://password-manager/passwords"}
    hit = "chrome://password-manager/passwords?q=1"
    assert score("is_expected_active_tab_approximate", hit, approx) == 1.0
    assert score("is_expected_active_tab_approximate", "chrome://settings", approx) == 0.0


def test_url_patterns_and_search_queries():
    rules = {"expected": ["/manchester/", r"\?date="]}
    assert score("is_expected_url_pattern_match", "https://x.org/manchester/?date=1", rules) == 1
    assert score("is_expected_url_pattern_match", {"url": "https://x.org/manchester/"}, rules) == 0
    assert score("is_expected_url_pattern_match", {"title": "no url"}, rules) == 0
    assert score("is_expected_url_pattern_match", "", rules) == 0
    query = {"expect": {"pattern": r"(?i)https?://(?:www\.)?google\.com/search\?q=nereida(?:&|$)"}}
    assert score("is_expected_search_query", {"url": "https://google.com/search?q=nereida"}, query)
    assert not score("is_expected_search_query", {"url": "https://google.com/search?q=x"}, query)


def test_open_tabs_in_any_order_and_the_same_number():
    rule = {"type": "url", "urls": ["https://www.lonelyplanet.com", "https://www.airbnb.com"]}
    tabs = [{"url": "https://airbnb.com/"}, {"url": "https://lonelyplanet.com"}]
    assert score("is_expected_tabs", tabs, rule) == 1.0
    assert score("is_expected_tabs", [*tabs, {"url": "https://x.org"}], rule) == 0.0
    assert score("is_expected_tabs", [], rule) == 0.0


def bookmarks(*children):
    return {"bookmark_bar": {"children": list(children)}}


def test_bookmarks_folders_sites_and_liked_authors():
    folder = {"type": "folder", "name": "Favorites", "children": []}
    site = {"type": "url", "name": "a", "url": "https://a.org/"}
    names = {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}
    assert score("is_expected_bookmarks", bookmarks(folder, site), names) == 1.0
    assert score("is_expected_bookmarks", bookmarks(site), names) == 0.0
    urls = {"type": "bookmark_bar_websites_urls", "urls": ["https://a.org/"]}
    assert score("is_expected_bookmarks", bookmarks(folder, site), urls) == 1.0
    liked = {
        "type": "folder",
        "name": "Liked Authors",
        "children": [
            {"type": "url", "url": "https://b.org/2"},
            {"type": "url", "url": "https://c.org"},
        ],
    }
    rule = {
        "type": "liked_authors_websites_urls",
        "urls": [["https://b.org/1", "https://b.org/2"], "https://c.org"],
    }
    assert score("is_expected_bookmarks", bookmarks(liked), rule) == 1.0
    assert score("is_expected_bookmarks", bookmarks(folder), rule) == 0.0
    with pytest.raises(StateActError, match="no rule of type 'other'"):
        score("is_expected_bookmarks", bookmarks(folder), {"type": "other"})


def test_history_cookies_font_size_cart_and_shortcuts():
    history = [("https://www.youtube.com/watch?v=1", "t", 1), ("https://x.org", "x", 2)]
    keywords = {"type": "keywords", "keywords": ["youtube"]}
    assert score("check_history_deleted", history, keywords) == 0.0
    assert score("check_history_deleted", history[1:], keywords) == 1.0
    cookies = [(0, ".amazon.com", "session"), (0, ".x.org", "id")]
    domains = {"type": "domains", "domains": [".amazon.com"]}
    assert score("is_cookie_deleted", cookies, domains) == 0.0
    assert score("is_cookie_deleted", cookies[1:], domains) == 1.0
    size = {"type": "range", "min": 16, "max": 99999}
    assert score("check_font_size", {"default_font_size": 20}, size) == 1.0
    assert score("check_font_size", {"default_font_size": 16}, size) == 0.0
    assert score("check_font_size", {"default_font_size": 16}, {"type": "value", "value": 16})
    cart = {"items": ["The Dota 2 Official Soundtrack"]}
    assert score(
        "is_added_to_steam_cart", {"content": "Cart: The Dota 2 Official Soundtrack"}, cart
    )
    assert not score("is_added_to_steam_cart", {"content": "Cart: empty"}, cart)
    shortcut = {"/home/user/Desktop/game.desktop": "[Desktop Entry]\nName=Play Puzzle Game 2048\n"}
    name = {"type": "name", "name": "play puzzle game 2048"}
    assert score("is_shortcut_on_desktop", shortcut, name) == 1.0
    assert score("is_shortcut_on_desktop", {}, name) == 0.0
    exec_rule = {"type": "exec", "exec": "google-chrome --app=https://x.org"}
    assert score("is_shortcut_on_desktop", shortcut, exec_rule) == 0.0
