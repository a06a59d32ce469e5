"""OSWorld's getters that read web pages through the desktop's Chrome: values parsed out of the
active tab's page (`active_tab_html_parse`) or its URL path (`url_path_parse`), and values read
from a page opened for the check (`info_from_website`, `pdf_from_url`; a live site needs the
network).
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from harness.kernel.core import StateActError
from tasks.chrome_live import cdp_call
from tasks.getters.chrome_live import active_url, live
from tasks.getters.registry import GetterContext, getter, work_path
from tasks.html_parse import from_answers, queries
from tasks.setup import SOURCE_DESKTOP

FIFTY_OFF = "50_PERCENT_ off & more"
LESSER_DISCOUNTS = ("30_PERCENT_ off & more", "20_PERCENT_ off & more")
PRINTED_PDF = re.compile(r"/tmp/stateact-pdf-[A-Za-z0-9_]+/page\.pdf")
"""Where chrome_cdp.py's `pdf` operation prints (a fresh `tempfile.mkdtemp` folder)."""
RECREATION_SEARCH = "Diamond"
"""What OSWorld's recreation.gov getter types into the site's search (task b4f95342's park)."""
INFO_ACTIONS = ("inner_text", "attribute", "click_and_inner_text", "click_and_attribute")


@getter("active_tab_html_parse")
def get_active_tab_html_parse(spec: dict, ctx: GetterContext) -> dict | None:
    """Named values of the active tab's page (see tasks/html_parse.py); None when no tab is on
    screen, {} when no open page has the address bar's URL (with `goto_prefix`)."""
    url = active_url(spec, ctx)
    if url is None:
        return None
    asked = queries(spec)
    found = live(ctx, {"op": "html_parse", "url": url, "queries": asked, "wait_s": 5})
    if found is None:
        return {}
    return from_answers(spec, found["answers"], found["url"])


def path_fields(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """OSWorld's reading of a Macy's-style URL path: (flags, facets). Facets come from the first
    pair of path parts that both hold commas, `Name1,Name2/value1,value2`."""
    path = unquote(urlparse(url).path)
    facets: dict[str, Any] = {}
    shirts, short_sleeve = "shirts" in path, "short-sleeve" in path
    parts = path.strip("/").split("/")
    for names, values in zip(parts, parts[1:], strict=False):
        if "," not in names or "," not in values:
            continue
        for name, value in zip(names.split(","), values.split(","), strict=False):
            name, value = name.strip(), value.strip()
            if name == "Price_discount_range":
                facets[name] = [item.strip() for item in value.split("|")] if value else None
            else:
                facets[name] = value or None
            shirts = shirts or (
                name == "Product_department" and value in ("shirts", "Shirts", "Shirt")
            )
            short_sleeve = short_sleeve or (
                name == "Sleeve_length" and value in ("short-sleeve", "Short Sleeve")
            )
        break
    for name in ("Men_regular_size_t", "Price_discount_range"):
        facets.setdefault(name, None)
    flags = {
        "mens_clothing": True if "mens-clothing" in path else None,
        "shirts": True if shirts else None,
        "short_sleeve": True if short_sleeve else None,
    }
    return flags, facets


def url_path_values(url: str, parse_keys: list) -> dict:
    """The flags, then each of `parse_keys` found among the facets; the discount range reads as
    whether 50% off & more alone of the usual ranges is chosen."""
    values, facets = path_fields(url)
    for key in parse_keys:
        if key not in facets:
            continue
        if key == "Price_discount_range":
            ranges = facets[key]
            fifty_only = ranges is not None and FIFTY_OFF in ranges
            fifty_only = fifty_only and not any(r in ranges for r in LESSER_DISCOUNTS)
            values[key] = FIFTY_OFF if fifty_only else f"not_{FIFTY_OFF}"
        else:
            values[key] = facets[key]
    return values


@getter("url_path_parse")
def get_url_path_parse(spec: dict, ctx: GetterContext) -> dict | None:
    """Shopping filters read from the active URL's path (OSWorld's Macy's parser)."""
    keys = spec.get("parse_keys")
    if not isinstance(keys, list):
        raise StateActError("url_path_parse getter needs a 'parse_keys' list")
    url = active_url(spec, ctx)
    return None if url is None else url_path_values(url, keys)


def check_infos(spec: dict) -> None:
    if not isinstance(spec.get("url"), str) or not isinstance(spec.get("infos"), list):
        raise StateActError("info_from_website getter needs a 'url' string and an 'infos' list")
    for info in spec["infos"]:
        action = info.get("action", "inner_text") if isinstance(info, dict) else None
        if action not in INFO_ACTIONS:
            raise StateActError(
                f"info_from_website: each info needs an action among {', '.join(INFO_ACTIONS)}"
            )
        many = action.startswith("click_")
        selector = info.get("selector")
        if not (isinstance(selector, list) and selector if many else isinstance(selector, str)):
            kind = "a non-empty list of selectors" if many else "a selector string"
            raise StateActError(f"info_from_website: a {action} info needs {kind}")


@getter("info_from_website")
def get_info_from_website(spec: dict, ctx: GetterContext) -> Any:
    """Texts or attributes read from `url` in a new tab of the desktop's Chrome (started if the
    agent closed it); OSWorld's `backups` when the page cannot be read."""
    check_infos(spec)
    request = {"op": "website_info", "url": spec["url"], "infos": spec["infos"]}
    try:
        return on_desktop_chrome(ctx, request)
    except StateActError:
        return spec.get("backups")


def on_desktop_chrome(ctx: GetterContext, request: dict) -> Any:
    """One chrome_cdp.py operation run on the desktop's display, so that it can start Chrome."""

    def run(command: str) -> tuple[int, str]:
        result = ctx.source.run_command(SOURCE_DESKTOP + command, True)
        return int(result.get("returncode", 0)), str(result.get("output", ""))

    return cdp_call(run, {**request, "wait_s": 5, "start_chrome": True})


@getter("pdf_from_url")
def get_pdf_from_url(spec: dict, ctx: GetterContext) -> str | None:
    """The page at `path` (a URL) printed to PDF by the desktop's Chrome, copied to `dest`."""
    url = spec.get("path")
    if not isinstance(url, str) or not url:
        raise StateActError("pdf_from_url getter needs a 'path' URL")
    printed = str(on_desktop_chrome(ctx, {"op": "pdf", "url": url}).get("path"))
    if not PRINTED_PDF.fullmatch(printed):  # it is removed below: only the script's own folder
        raise StateActError(f"Chrome's PDF was printed to an unexpected place: {printed[:200]!r}")
    dest = spec.get("dest") or PurePosixPath(urlparse(url).path).name or "page.pdf"
    fetched = ctx.source.fetch_file(printed, work_path(ctx, dest))
    ctx.source.run_command(f"rm -rf {shlex.quote(str(PurePosixPath(printed).parent))}", True)
    return str(fetched) if fetched else None


@getter("gotoRecreationPage_and_get_html_content")
def get_recreation_page_html_content(spec: dict, ctx: GetterContext) -> dict:
    """`{"expected": {class: text}}`: the text of the class's `order`-th element on the page
    recreation.gov opens for a search of "Diamond" after Next Available (OSWorld's scripted
    visit, in a new tab of the desktop's Chrome, which needs `--network`); OSWorld's failure
    marker as the text when the page has no such element."""
    class_name, order = spec.get("class"), spec.get("order")
    if spec.get("selector") != "class" or not isinstance(class_name, str) or not class_name:
        raise StateActError(
            "gotoRecreationPage_and_get_html_content needs selector 'class' and a 'class' name"
        )
    if order is not None and not str(order).isdigit():
        raise StateActError("gotoRecreationPage_and_get_html_content: 'order' must be a number")
    request = {
        "op": "recreation",
        "search": RECREATION_SEARCH,
        "class": class_name,
        "order": None if order is None else int(order),
        "timeout_s": 60,
    }
    found = on_desktop_chrome(ctx, request)
    return {"expected": dict(found["expected"])}
