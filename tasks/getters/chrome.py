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
UNPACKED = 4
"""`extensions.settings.<id>.location` of an extension loaded unpacked ("Load unpacked")."""
COLOR_SCHEMES = {0: "system", 1: "light", 2: "dark"}
CHROMIUM_OWN_CONTENT_KEYS = {"has_migrated_local_network_access"}
"""What Chromium writes into `profile.default_content_setting_values` on its own (a migration
marker, measured on an untouched Chromium 156 profile), not a setting the user changed."""


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
    """OSWorld's reading: any truthy `enable_do_not_track`."""
    return flag(bool(dig(preferences(ctx), "enable_do_not_track", default=False)))


@getter("enable_safe_browsing")
def get_enable_safe_browsing(spec: dict, ctx: GetterContext) -> str:
    """Standard or enhanced protection, as OSWorld reads it: a `safebrowsing` block without
    `enabled` or `enhanced` reads "false", although Chrome's own default is on."""
    safe = dig(preferences(ctx), "safebrowsing", default={})
    safe = safe if isinstance(safe, dict) else {}
    return flag(bool(safe.get("enhanced", False)) or bool(safe.get("enabled", False)))


@getter("profile_name")
def get_profile_name(spec: dict, ctx: GetterContext) -> str | None:
    return dig(preferences(ctx), "profile", "name")


@getter("default_search_engine")
def get_default_search_engine(spec: dict, ctx: GetterContext) -> str:
    """`default_search_provider_data.template_url_data.short_name`, Google when absent. Only
    that key, as OSWorld reads it: `default_search_provider.name` is an obsolete key Chromium
    keeps but no longer acts on, so a value there is not the engine in use."""
    provider = dig(preferences(ctx), "default_search_provider_data", "template_url_data")
    return provider.get("short_name", "Google") if isinstance(provider, dict) else "Google"


@getter("new_startup_page")
def get_new_startup_page(spec: dict, ctx: GetterContext) -> str:
    """As OSWorld reads it: no `session` block (a fresh profile) is the New Tab page; otherwise
    only `session.restore_on_startup` == 5 is (an empty list of pages to open is not)."""
    data = preferences(ctx)
    if "session" not in data:
        return "true"
    return flag(dig(data, "session", "restore_on_startup") == NEW_TAB_PAGE)


def color_scheme_on_disk(ctx: GetterContext) -> str:
    """OSWorld's file reading of the appearance mode (its fallback when the live page cannot be
    read): `color_scheme2`, else `color_scheme`, as a number or a name; an
    `extensions.theme.system_theme` of 0 reads "light" whatever the scheme says."""
    data = preferences(ctx)
    theme = dig(data, "browser", "theme", default={})
    raw = theme.get("color_scheme2", theme.get("color_scheme")) if isinstance(theme, dict) else None
    if dig(data, "extensions", "theme", "system_theme") in (0, "0", False):
        return "light"
    if isinstance(raw, str):
        raw = raw.strip().lower()
        names = {"system": "system", "default": "system", "light": "light", "dark": "dark"}
        return names.get(raw) or COLOR_SCHEMES.get(int(raw) if raw.isdigit() else -1, "system")
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return COLOR_SCHEMES.get(int(raw), "system")
    return "system"


@getter("data_delete_automacally")  # sic: OSWorld's spelling
def get_data_delete_automatically(spec: dict, ctx: GetterContext) -> str:
    """OSWorld's reading: "true" when `profile.default_content_setting_values` exists at all (any
    site-setting default changed), whatever it holds; see docs/osworld-fidelity.md. Chromium 156
    writes that block itself, holding only its own migration marker, on every profile; OSWorld's
    Chrome did not, so a block with nothing but Chromium's markers reads as absent."""
    profile = preferences(ctx).get("profile")
    if not isinstance(profile, dict):
        return "false"  # OSWorld answers "Google" here, which no rule expects
    values = profile.get("default_content_setting_values")
    if isinstance(values, dict) and values and set(values) <= CHROMIUM_OWN_CONTENT_KEYS:
        values = None
    return flag(values is not None)


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
