"""Workbook access shared by the spreadsheet metrics, with OSWorld's semantics (our own code).

OSWorld opens a workbook three ways and each rule picks one: the file path (CSV exports beside
it, raw cell XML), a pandas `ExcelFile` (frames) and an openpyxl `Workbook` loaded with formulas
(styles, charts, validations). Sheet references are resolved against pandas' sheet names; an
unresolvable index becomes the sheet name "" and a missing sheet loads as None.
docs/osworld-fidelity.md lists the oddities kept on purpose (raw-XML cell values, sheets found by
sheetId, swallowed errors).
"""

from __future__ import annotations

import builtins
import functools
import operator
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lxml.etree
import openpyxl
import pandas as pd
from openpyxl.cell.cell import MergedCell
from openpyxl.utils.cell import range_boundaries
from openpyxl.workbook import Workbook
from openpyxl.worksheet.cell_range import MultiCellRange

from harness.kernel.core import StateActError

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS = {"oo": MAIN_NS}
CSV_ENCODINGS = ("utf-8-sig", "utf-8", "latin-1")
"""OSWorld tries more encodings after latin-1, but latin-1 decodes any byte sequence."""


class MissingSheet(Exception):
    """A sheet reference that OSWorld treats as a failed rule (its loader returned None)."""


@dataclass
class Workbooks:
    """One spreadsheet opened the ways OSWorld's rules read it."""

    path: str
    frames: pd.ExcelFile
    book: Workbook

    @property
    def names(self) -> list[str]:
        return self.frames.sheet_names

    @classmethod
    def open(cls, path: str) -> Workbooks:
        return cls(path, pd.ExcelFile(path), openpyxl.load_workbook(filename=path))


class Books:
    """The result and expected workbooks and OSWorld's sheet references into them."""

    def __init__(self, result: Workbooks, expected: Workbooks | None) -> None:
        self.result = result
        self.expected = expected

    def resolve(self, ref: Any) -> tuple[Workbooks | None, str]:
        """(workbooks, sheet name) for an index, `RI<n>`, `RN<name>`, `EI<n>` or `EN<name>`."""
        result_names = self.result.names
        expected_names = self.expected.names if self.expected is not None else None
        if isinstance(ref, int):
            in_range = result_names and -len(result_names) <= ref < len(result_names)
            return self.result, result_names[ref] if in_range else ""
        if not isinstance(ref, str):
            raise StateActError(f"sheet reference {ref!r} is neither a number nor a string")
        for prefix, book, names in (
            ("RI", self.result, result_names),
            ("RN", self.result, None),
            ("EI", self.expected, expected_names),
            ("EN", self.expected, None),
        ):
            if ref.startswith(prefix):
                if names is None and prefix[1] == "N":
                    return book, ref[2:]
                try:
                    return book, names[int(ref[2:])]
                except (TypeError, ValueError, IndexError):
                    return book, ""
        raise StateActError(f"sheet reference {ref!r} is not an index, RI/RN/EI/EN<sheet>")

    def frame(self, ref: Any) -> pd.DataFrame:
        book, name = self.resolve(ref)
        if book is None:
            raise StateActError(f"sheet reference {ref!r} needs an expected workbook")
        try:
            return pd.read_excel(book.frames, name)
        except Exception:  # noqa: BLE001 -- OSWorld's loader turns any failure into "no sheet"
            raise MissingSheet(f"sheet reference {ref!r} names no sheet pandas can read") from None

    def sheet(self, ref: Any):
        book, name = self.resolve(ref)
        if book is None:
            raise StateActError(f"sheet reference {ref!r} needs an expected workbook")
        if name not in book.book.sheetnames:
            raise MissingSheet(f"sheet reference {ref!r} names no sheet of {book.book.sheetnames}")
        return book.book[name]

    def sheet_or_none(self, ref: Any):
        """The openpyxl sheet, or None where OSWorld's object loaders return an empty result."""
        try:
            return self.sheet(ref)
        except MissingSheet:
            return None

    def path_and_name(self, ref: Any) -> tuple[str, str]:
        book, name = self.resolve(ref)
        if book is None:
            raise StateActError(f"sheet reference {ref!r} needs an expected workbook")
        return book.path, name


def read_text_lines(path: str | Path) -> list[str]:
    """A text file's lines, decoded as OSWorld does (first encoding that works)."""
    data = Path(path).read_bytes()
    for encoding in CSV_ENCODINGS:
        try:
            return data.decode(encoding).splitlines()
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace").splitlines()


def sheet_xml_name(archive: zipfile.ZipFile, sheet_name: str) -> str:
    """The worksheet part OSWorld reads: `sheet<sheetId>.xml`, whatever the relations say."""
    workbook = lxml.etree.fromstring(archive.read("xl/workbook.xml"))
    ids = {s.get("name"): s.get("sheetId") for s in workbook.iterfind("oo:sheets/oo:sheet", NS)}
    return f"xl/worksheets/sheet{ids[sheet_name]}.xml"


def shared_strings(archive: zipfile.ZipFile) -> list[str]:
    try:
        root = lxml.etree.fromstring(archive.read("xl/sharedStrings.xml"))
        return [
            "".join(t.text for t in si.iter(f"{{{MAIN_NS}}}t")) for si in root.iterfind("oo:si", NS)
        ]
    except Exception:  # noqa: BLE001 -- OSWorld drops all shared strings on any problem
        return []


@functools.lru_cache(maxsize=16)
def parsed_sheet(path: str, sheet_name: str, stamp: tuple) -> tuple[list[str], dict] | None:
    """(shared strings, {coordinate: first <c> element}) of one sheet; None when unreadable.

    Cached per file version (`stamp`): rules read many cells of the same sheet.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            strings = shared_strings(archive)
            sheet = lxml.etree.fromstring(archive.read(sheet_xml_name(archive, sheet_name)))
    except Exception:  # noqa: BLE001 -- OSWorld: unreadable file or sheet reads as None
        return None
    cells: dict[str, Any] = {}
    for cell in sheet.iterfind("oo:sheetData/oo:row/oo:c", NS):
        cells.setdefault(cell.get("r"), cell)
    return strings, cells


def read_cell_value(path: str, sheet_name: str, coordinate: str) -> Any:
    """A cell's stored value from the sheet XML: numbers as float, booleans and dates as None."""
    if not Path(path).exists():
        return None
    info = Path(path).stat()
    parsed = parsed_sheet(str(path), sheet_name, (info.st_mtime_ns, info.st_size))
    if parsed is None:
        return None
    strings, cells = parsed
    cell = cells.get(coordinate)
    return None if cell is None else stored_value(cell, strings)


def leaf_value(element: Any) -> Any:
    """An XML leaf the way OSWorld's xmltodict reads it: stripped text, or a dict when the element
    has attributes (`<t xml:space="preserve">` becomes {"@...:space": "preserve", "#text": ...})."""
    text = (element.text or "").strip() or None
    if not element.attrib:
        return text
    read = {}
    for key, value in element.attrib.items():
        namespace, _, local = key[1:].partition("}") if key.startswith("{") else ("", "", key)
        read[f"@{namespace}:{local}" if namespace else f"@{local}"] = value
    if text is not None:
        read["#text"] = text
    return read


def stored_value(cell: Any, strings: list[str]) -> Any:
    """A `<c>` element's value by its type: numbers as float; booleans and dates (t="b"/"d")
    as None, since OSWorld has no branch for them."""
    kind = cell.get("t")
    value = cell.find("oo:v", NS)
    if kind in (None, "n", "s", "str", "e"):
        if value is None:
            return None
        text = leaf_value(value)
        if kind in (None, "n"):
            return float(text)
        return strings[int(text)] if kind == "s" else text
    if kind == "inlineStr":
        inline = cell.findall("oo:is/oo:t", NS)
        if not inline:
            return None
        return leaf_value(inline[0]) if len(inline) == 1 else [leaf_value(t) for t in inline]
    return None


def style_value(style_name: str, cell: Any, diff: Any = None) -> Any:
    """A cell's (or a conditional format's) style property, read as OSWorld reads it."""
    has_value = cell.value is not None
    source = diff or cell
    if style_name == "number_format":
        if not (has_value and cell.data_type == "n"):
            return None
        return cell.number_format if diff is None else diff.numFmt.formatCode
    fonts = {
        "font_name": "name",
        "font_family": "family",
        "font_bold": "bold",
        "font_italic": "italic",
        "font_underline": "underline",
        "font_size": "size",
    }
    if style_name in fonts:
        return getattr(source.font, fonts[style_name]) if has_value else None
    if style_name == "font_color":
        return source.font.color.rgb if has_value else None
    if style_name == "fill_type":
        try:
            return source.fill.tagname
        except AttributeError:
            return None
    if style_name in ("bgcolor", "fgcolor"):
        try:
            return diff.fill.bgColor.rgb if diff is not None else cell.fill.fgColor.rgb
        except AttributeError:
            return None
    if style_name == "hyperlink":
        # OSWorld's `a or b if c else d` parses as `a or (b if c else d)`: a link is the object.
        return cell.hyperlink or ("" if has_value else None)
    if style_name == "merge":
        return isinstance(cell, MergedCell)
    raise StateActError(f"unsupported cell style {style_name!r}")


def comparison(value: Any, rule: dict) -> bool:
    """OSWorld's `_match_value_to_rule`: `value` against {"method", "ref"}; may raise as it does."""
    method, ref = rule["method"], rule.get("ref")
    if method.startswith("re"):
        flags = 0
        for name in method.split(".")[1:]:
            flags |= getattr(re, name)
        return re.search(ref, value, flags) is not None
    if method in ("eq", "ne", "le", "lt", "ge", "gt"):
        return getattr(operator, method)(value, ref)
    if method.startswith("approx"):
        threshold = float(method.split(":")[1])
        try:
            number = float(value)
        except (ValueError, TypeError):
            return False
        return abs(number - ref) <= threshold
    if method == "spreadsheet_range":
        inner, outer = MultiCellRange(ref[0]), MultiCellRange(ref[1])
        return all(r in value for r in inner) and all(r in outer for r in value)
    if method.startswith("range."):
        left = getattr(operator, "l" + method[6])
        right = getattr(operator, "l" + method[7])
        return left(ref[0], value) and right(value, ref[1])
    if method in ("str_list_eq", "str_set_eq"):
        container = getattr(builtins, method[4:-3])
        return container(value.strip("\"'").split(",")) == container(ref)
    raise StateActError(f"unknown comparison method {method!r}")


def range_between(ranges: str, ref: list[str]) -> bool:
    """`spreadsheet_range` on a range string: the ranges cover `ref[0]` and lie within `ref[1]`."""
    if not ranges:
        return False
    parts = ranges.split()
    bounds = [range_boundaries(p) for p in parts]
    if len(ref) > 1:
        outer = range_boundaries(ref[1])
        inside = all(
            b[0] >= outer[0] and b[1] >= outer[1] and b[2] <= outer[2] and b[3] <= outer[3]
            for b in bounds
        )
        if not inside:
            return False
    need_col0, need_row0, need_col1, need_row1 = range_boundaries(ref[0])
    return all(
        any(b[0] <= c <= b[2] and b[1] <= r <= b[3] for b in bounds)
        for r in range(need_row0, need_row1 + 1)
        for c in range(need_col0, need_col1 + 1)
    )
