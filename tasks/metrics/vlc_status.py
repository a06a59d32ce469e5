"""`is_vlc_playing` as OSWorld's: VLC's web-interface status (`/requests/status.xml`, read by the
vlc_playing_info getter) says it is playing the expected file or stream. The playing item is
named by the first meta field VLC filled in, in OSWorld's order of preference."""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import urlparse
from xml.etree import ElementTree

from harness.kernel.core import StateActError
from tasks.metrics.general import read_text
from tasks.metrics.registry import metric

META = 'information/category[@name="meta"]/info[@name="{}"]'
STREAM = 'information/category[@name="Stream 0"]/info[@name="{}"]'
FILE_FIELDS = [META.format(n) for n in ("filename", "title", "uri", "location", "name")]
URL_FIELDS = [META.format(n) for n in ("url", "URI", "location", "title", "filename")] + [
    STREAM.format(n) for n in ("Codec", "Type", "Language")
]


def first_filled(tree: ElementTree.Element, fields: list[str]) -> str | None:
    for field in fields:
        found = tree.find(field)
        if found is not None and found.text:
            return found.text
    return None


def names_file(shown: str, file_name: str) -> bool:
    """VLC shows the file itself or a path ending in it."""
    return posixpath.basename(shown) == file_name or shown.endswith(file_name)


def names_stream(shown: str, url: str) -> bool:
    """VLC shows the URL (or one containing it), the URL's file name (HLS streams), or a URL of
    the same host whose path contains the expected one."""
    if url in shown:
        return True
    expected = urlparse(url)
    if shown == posixpath.basename(expected.path):
        return True
    if "://" not in shown:
        return False
    actual = urlparse(shown)
    return expected.netloc == actual.netloc and expected.path in actual.path


@metric("is_vlc_playing")
def is_vlc_playing(result: str | None, rules: dict, **_: Any) -> float:
    """VLC's state is `playing` and the item is the rule's `file_name` (type file_name) or `url`
    (type url); any other rule type scores 0, as OSWorld's."""
    text = read_text(result)
    if text is None:
        return 0.0
    try:
        tree = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise StateActError(f"VLC's status is not XML ({exc})") from None
    if tree.findtext("state") != "playing":
        return 0.0
    kind = rules.get("type") if isinstance(rules, dict) else None
    if kind == "file_name":
        shown = first_filled(tree, FILE_FIELDS)
        return float(shown is not None and names_file(shown, str(rules.get("file_name"))))
    if kind == "url":
        shown = first_filled(tree, URL_FIELDS)
        return float(shown is not None and names_stream(shown, str(rules.get("url"))))
    return 0.0
