"""OSWorld's Chrome getters that read the browser profile's JSON files, not a live browser.

Chrome writes its settings to `<profile>/Default/Preferences` (and extension records also to
`Secure Preferences`), and `Local State` one level up. Task setups write the google-chrome profile;
Debian's Chromium keeps the same files under `.config/chromium`, so both are tried. Chrome only
writes a setting that differs from its default, so an absent key reads as Chrome's default.
Boolean answers are the strings "true"/"false", which is what the task rules compare with.
"""

from __future__ import annotations

import json
from typing import Any

from harness.kernel.core import StateActError
from sandboxes.base import SANDBOX_HOME
from tasks.getters.registry import GetterContext, getter, work_path

PROFILE_ROOTS = (f"{SANDBOX_HOME}/.config/google-chrome", f"{SANDBOX_HOME}/.config/chromium")
NEW_TAB_PAGE = 5
"""`session.restore_on_startup` value for "Open the New Tab page"."""
OPEN_URLS = 4
"""`session.restore_on_startup` value for "Open a specific page or set of pages"."""
SESSION_ONLY = 4
"""Content-setting value for cookies that are deleted when the browser closes."""
UNPACKED = 4
"""`extensions.settings.<id>.location` of an extension loaded unpacked ("Load unpacked")."""
COLOR_SCHEMES = {0: "system", 1: "light", 2: "dark"}


def read_profile_json(ctx: GetterContext, relative: str) -> dict | None:
    """A profile JSON file (`Default/Preferences`, `Local State`) from the first profile that has
    it."""
    for root in PROFILE_ROOTS:
        dest = work_path(ctx, f"chrome/{root.rsplit('/', 1)[-1]}/{relative}")
        fetched = ctx.source.fetch_file(f"{root}/{relative}", dest)
        if fetched is None:
            continue
        try:
            data = json.loads(fetched.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            raise StateActError(f"Chrome's {relative} is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise StateActError(f"Chrome's {relative} is not a JSON object")
        return data
    return None


def preferences(ctx: GetterContext) -> dict:
    """The profile's Preferences; StateActError when no Chrome profile exists in the machine."""
    data = read_profile_json(ctx, "Default/Preferences")
    if data is None:
        roots = " or ".join(PROFILE_ROOTS)
        raise StateActError(f"no Chrome profile: Default/Preferences is in neither {roots}")
    return data


def dig(data: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def flag(value: Any) -> str:
    return "true" if value is True else "false"


@getter("enable_do_not_track")
def get_enable_do_not_track(spec: dict, ctx: GetterContext) -> str:
    return flag(dig(preferences(ctx), "enable_do_not_track", default=False))


@getter("enable_safe_browsing")
def get_enable_safe_browsing(spec: dict, ctx: GetterContext) -> str:
    """Standard or enhanced protection; Chrome's default (no key) is standard protection, on."""
    safe = dig(preferences(ctx), "safebrowsing", default={})
    return flag(safe.get("enabled", True) is True or safe.get("enhanced") is True)


@getter("profile_name")
def get_profile_name(spec: dict, ctx: GetterContext) -> str | None:
    return dig(preferences(ctx), "profile", "name")


@getter("default_search_engine")
def get_default_search_engine(spec: dict, ctx: GetterContext) -> str:
    """The default search provider's name; Google when the user never changed it."""
    data = preferences(ctx)
    provider = dig(data, "default_search_provider_data", "template_url_data", default={})
    return provider.get("short_name") or dig(data, "default_search_provider", "name") or "Google"


@getter("new_startup_page")
def get_new_startup_page(spec: dict, ctx: GetterContext) -> str:
    """Whether Chrome starts on the New Tab page (the default, or no pages to open)."""
    session = dig(preferences(ctx), "session", default={})
    mode = session.get("restore_on_startup", NEW_TAB_PAGE)
    urls = session.get("startup_urls") or []
    return flag(mode == NEW_TAB_PAGE or (mode == OPEN_URLS and not urls))


@getter("chrome_appearance_mode_ui")
def get_chrome_appearance_mode_ui(spec: dict, ctx: GetterContext) -> str:
    """ "light", "dark" or "system" (the default) from the theme's colour-scheme setting."""
    theme = dig(preferences(ctx), "browser", "theme", default={})
    scheme = theme.get("color_scheme2", theme.get("color_scheme", 0))
    return COLOR_SCHEMES.get(scheme, "system")


@getter("data_delete_automacally")  # sic: OSWorld's spelling
def get_data_delete_automatically(spec: dict, ctx: GetterContext) -> str:
    """Whether cookies and site data are cleared when Chrome closes."""
    data = preferences(ctx)
    cookies = dig(data, "profile", "default_content_setting_values", "cookies")
    on_exit = dig(data, "browser", "clear_data", "cookies_on_exit", default=False)
    return flag(cookies == SESSION_ONLY or on_exit is True)


def extension_settings(ctx: GetterContext) -> dict[str, dict]:
    """Extension records from Preferences and Secure Preferences (newer Chrome uses the latter)."""
    merged: dict[str, dict] = {}
    for relative in ("Default/Preferences", "Default/Secure Preferences"):
        data = read_profile_json(ctx, relative) or {}
        for ext_id, record in dig(data, "extensions", "settings", default={}).items():
            if isinstance(record, dict):
                merged.setdefault(ext_id, {}).update(record)
    return merged


@getter("find_unpacked_extension_path")
def get_find_unpacked_extension_path(spec: dict, ctx: GetterContext) -> list[str]:
    """Folders of the extensions loaded unpacked."""
    return [
        record["path"]
        for record in extension_settings(ctx).values()
        if record.get("location") == UNPACKED and isinstance(record.get("path"), str)
    ]


@getter("find_installed_extension_name")
def get_find_installed_extension_name(spec: dict, ctx: GetterContext) -> list[str]:
    """Names of the installed extensions whose record carries their manifest."""
    return [
        record["manifest"]["name"]
        for record in extension_settings(ctx).values()
        if isinstance(record.get("manifest"), dict) and "name" in record["manifest"]
    ]
