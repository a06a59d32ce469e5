"""OSWorld's Chrome getters that ask the running browser (over CDP) or read its profile databases.

The live ones need the task to have launched `google-chrome --remote-debugging-port=...` (see
`chrome_live`). OSWorld reads the active tab's URL from the address bar in the accessibility
tree; here the active tab is the page whose document is visible, and the address bar's text is
derived from its URL the way Chrome shows it (scheme and `www.` elided), before `goto_prefix`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from harness.kernel.core import StateActError
from sandboxes.agent_files import open_sqlite, sqlite_rows
from tasks.chrome_live import cdp_call, omnibox_text
from tasks.getters.chrome import PROFILE_ROOTS, color_scheme_on_disk, dig, preferences
from tasks.getters.registry import GetterContext, getter, work_path

DEFAULT_FONT_SIZES = {
    "default_font_size": 16,
    "default_fixed_font_size": 13,
    "minimum_font_size": 0,
}
"""Chrome's font sizes when Preferences has no `webkit.webprefs` entry for them."""


APPEARANCE_PROBE = (
    Path(__file__).parents[1] / "sandbox_scripts" / "chrome_appearance.js"
).read_text()
APPEARANCE_MODES = {"light", "dark", "system"}


def live(ctx: GetterContext, request: dict) -> Any:
    def run(command: str) -> tuple[int, str]:
        result = ctx.source.run_command(command, True)
        return int(result.get("returncode", 0)), str(result.get("output", ""))

    return cdp_call(run, request)


def active_tab(ctx: GetterContext) -> dict | None:
    return live(ctx, {"op": "active", "wait_s": 5})


def active_url(spec: dict, ctx: GetterContext) -> str | None:
    """The address bar's text with `goto_prefix` (default `https://`) in front, as OSWorld's."""
    tab = active_tab(ctx)
    if tab is None:
        return None
    prefix = spec.get("goto_prefix", "https://")
    return f"{prefix or ''}{omnibox_text(tab['url'])}"


@getter("chrome_appearance_mode_ui")
def get_chrome_appearance_mode_ui(spec: dict, ctx: GetterContext) -> str:
    """The mode chrome://settings/appearance shows in the running browser, as OSWorld reads it
    (the page, not the file: Chrome writes Preferences later); the file when no browser answers
    or the page shows no mode."""
    request = {"op": "evaluate", "url": "chrome://settings/appearance", "js": APPEARANCE_PROBE}
    try:
        mode = live(ctx, {**request, "settle_s": 2.5, "wait_s": 5}).get("value")
    except StateActError:
        mode = None
    return mode if mode in APPEARANCE_MODES else color_scheme_on_disk(ctx)


@getter("active_tab_info")
def get_active_tab_info(spec: dict, ctx: GetterContext) -> dict | None:
    """`{"title", "url", "content"}` of the tab on screen; None when no tab is."""
    return active_tab(ctx)


@getter("active_url_from_accessTree")
def get_active_url_from_access_tree(spec: dict, ctx: GetterContext) -> str | None:
    return active_url(spec, ctx)


@getter("active_tab_url_parse")
def get_active_tab_url_parse(spec: dict, ctx: GetterContext) -> dict | None:
    """The query parameters `parse_keys` of the active URL; `replace` renames keys."""
    url = active_url(spec, ctx)
    if url is None:
        return None
    query = parse_qs(urlparse(url).query)
    values = {key: query.get(key, [""])[0] for key in spec.get("parse_keys", [])}
    for old, new in (spec.get("replace") or {}).items():
        if old in values:
            values[new] = values.pop(old)
    return values


@getter("url_dashPart")
def get_url_dash_part(spec: dict, ctx: GetterContext) -> Any:
    """One `/`-separated part (`partIndex`) of the active URL, as a string or `{key: part}`."""
    url = active_url(spec, ctx)
    if url is None:
        return None
    parts = url.split("/")
    index = int(spec.get("partIndex", -1))
    if not -len(parts) <= index < len(parts):
        return None
    part = parts[index]
    return {spec["key"]: part} if spec.get("returnType") == "json" else part


@getter("open_tabs_info")
def get_open_tabs_info(spec: dict, ctx: GetterContext) -> list[dict]:
    """`[{"title", "url"}]` for every open tab."""
    return live(ctx, {"op": "tabs", "wait_s": 5})


@getter("page_info")
def get_page_info(spec: dict, ctx: GetterContext) -> dict:
    """`{"title", "url", "content"}` of `url` opened in a new tab of the desktop browser."""
    if not isinstance(spec.get("url"), str):
        raise StateActError("page_info getter needs a 'url' string")
    return live(ctx, {"op": "page_info", "url": spec["url"], "wait_s": 5})


def profile_file(ctx: GetterContext, relatives: tuple[str, ...], dest: str) -> str | None:
    """The first profile file of `relatives` copied to the work dir under `dest`."""
    for root in PROFILE_ROOTS:
        for relative in relatives:
            got = ctx.source.fetch_file(f"{root}/{relative}", work_path(ctx, dest))
            if got is not None:
                return str(got)
    return None


@getter("bookmarks")
def get_bookmarks(spec: dict, ctx: GetterContext) -> dict | None:
    """The `roots` of the profile's Bookmarks file (bookmark bar, other, synced)."""
    path = profile_file(ctx, ("Default/Bookmarks",), "chrome/Bookmarks")
    if path is None:
        return None
    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except json.JSONDecodeError as exc:
        raise StateActError(f"Chrome's Bookmarks is not valid JSON ({exc})") from None
    return data.get("roots") if isinstance(data, dict) else None


@getter("history")
def get_history(spec: dict, ctx: GetterContext) -> list[tuple] | None:
    """`(url, title, last_visit_time)` of every history entry."""
    path = profile_file(ctx, ("Default/History",), spec.get("dest", "History"))
    if path is None:
        return None
    # The agent's database: read-only, under a deadline, a heap limit and a row cap, so a
    # recursive or endless view in place of `urls` ends with a reason instead of taking the host.
    with open_sqlite(path) as db:
        return sqlite_rows(db, "SELECT url, title, last_visit_time FROM urls")


@getter("cookie_data")
def get_cookie_data(spec: dict, ctx: GetterContext) -> str | None:
    """A copy of the Cookies database (newer Chrome keeps it under `Default/Network`)."""
    relatives = ("Default/Cookies", "Default/Network/Cookies")
    return profile_file(ctx, relatives, spec.get("dest", "Cookies"))


@getter("chrome_font_size")
def get_chrome_font_size(spec: dict, ctx: GetterContext) -> dict:
    """The three font sizes of Chrome's appearance settings, Chrome's defaults where unset."""
    stored = dig(preferences(ctx), "webkit", "webprefs", default={})
    return {key: stored.get(key, default) for key, default in DEFAULT_FONT_SIZES.items()}
