"""Small metrics over text files, directory listings and command output that OSWorld's multi-app
and OS tasks use, each following OSWorld's function of the same name (general.py, vscode.py,
basic_os.py). Oddities kept for comparable scores are listed in docs/osworld-fidelity.md.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path
from typing import Any

from tasks.metrics.registry import metric

CLOCK_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")
PYTHON_HEADERS = ("#!", "# -*- coding:", "# coding:", "# coding=")


@metric("compare_result_files")
def compare_result_files(result: str | None, expected: str | None, **_: Any) -> float:
    """Stripped contents equal; when the gold is a number, the result may contain the gold text or
    be a number within 1e-4 of it."""
    if not result or not expected:
        return 0.0
    mine, gold = Path(result).read_text().strip(), Path(expected).read_text().strip()
    try:
        gold_number = float(gold)
        if gold in mine:
            return 1.0
        return float(abs(float(mine) - gold_number) < 1e-4)
    except ValueError:
        return float(mine == gold)


@metric("check_line_number")
def check_line_number(result: str | None, rules: dict, **_: Any) -> float:
    """The number of lines holding a clock time (HH:MM:SS) is `rules['expected']`."""
    if result is None or not Path(result).is_file():
        return 0.0
    try:
        with open(result) as lines:
            count = sum(1 for line in lines if CLOCK_TIME.search(line))
        return float(count == int(rules["expected"]))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return 0.0


def python_text(text: str) -> str:
    """Non-blank lines with tabs expanded to 4 and trailing blanks dropped, after a shebang or
    coding line among the first three lines."""
    lines = text.splitlines()
    start = 0
    while start < min(len(lines), 3) and lines[start].strip().startswith(PYTHON_HEADERS):
        start += 1
    return "\n".join(line.expandtabs(4).rstrip() for line in lines[start:] if line.strip())


@metric("compare_python_pure_text")
def compare_python_pure_text(result: str | None, expected: str | None, **_: Any) -> float:
    """The two Python files are equal up to headers, blank lines, tabs and trailing blanks."""
    if not result or not expected:
        return 0.0
    try:
        mine = Path(result).read_text(encoding="utf-8")
        gold = Path(expected).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 0.0
    return float(python_text(mine) == python_text(gold))


def same_names(found: list, expected: list) -> float:
    """As many names as expected, and the same set of them."""
    return float(len(found) == len(expected) and set(found) == set(expected))


@metric("check_moved_jpgs")
def check_moved_jpgs(listing: dict, rules: dict, **_: Any) -> float:
    """The folder listing's children (a `list_directory` tree) are exactly the expected files."""
    return same_names([node["name"] for node in listing["children"]], rules["expected"])


@metric("check_gnome_favorite_apps")
def check_gnome_favorite_apps(apps: str, rules: dict, **_: Any) -> float:
    """gsettings' favourite-apps list (a Python list literal) holds exactly the expected apps."""
    # OSWorld eval()s the string; a literal parser reads the same lists without running code.
    return same_names(list(ast.literal_eval(apps.strip())), rules["expected"])


def city_key(value: Any) -> str:
    """Lower case, accents and punctuation dropped, for tolerant city matching."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFKD", str(value))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@metric("compare_conference_city_in_order")
def compare_conference_city_in_order(result: str, rules: dict, **_: Any) -> float:
    """Cells C2:C22 of the workbook's active sheet each contain (tolerantly) the expected city of
    the same position, or one of its listed alternatives."""
    import openpyxl

    expected = rules["expected"]
    sheet = openpyxl.load_workbook(result).active
    cities = [cell.value for row in sheet["C2:C22"] for cell in row]
    try:
        for index, city in enumerate(cities):
            wanted = expected[index]
            if isinstance(wanted, str):
                wanted = [wanted]
            elif not isinstance(wanted, list):
                return 0.0
            found = city_key(city)
            if not any(city_key(option) and city_key(option) in found for option in wanted):
                return 0.0
    except IndexError:
        return 0.0
    return 1.0


def same_html_node(node1, node2, ignore_sdnum: bool) -> bool:
    """OSWorld's element test: strings equal; tags with the same name, stripped text and attributes
    (with `ignore_sdnum`, a tag whose attributes differ passes when they agree without `sdnum`)."""
    from bs4 import Tag

    if not (isinstance(node1, Tag) and isinstance(node2, Tag)):
        return node1 == node2
    if node1.name != node2.name or node1.text.strip() != node2.text.strip():
        return False
    if node1.attrs != node2.attrs:
        if not ignore_sdnum:
            return False
        return {k: v for k, v in node1.attrs.items() if k != "sdnum"} == {
            k: v for k, v in node2.attrs.items() if k != "sdnum"
        }
    return True


@metric("compare_htmls")
def compare_htmls(result: str, expected: str, ignore_sdnum: bool | None = None, **_: Any) -> float:
    """The two HTML documents' nodes, walked in document order, pair up as equal (see
    `same_html_node`); extra nodes in the longer document are not looked at."""
    from bs4 import BeautifulSoup

    soups = []
    for path in (result, expected):
        with open(path, encoding="utf-8") as html:
            soups.append(BeautifulSoup(html, "lxml"))
    walks = (soup.descendants for soup in soups)
    return float(
        all(same_html_node(a, b, bool(ignore_sdnum)) for a, b in zip(*walks, strict=False))
    )
