"""Workbook access shared by the spreadsheet metrics: sheet references, cell properties, ranges.

A workbook is opened twice, for computed values (openpyxl `data_only=True`, which is also what
pandas reads, so a formula cell compares by its cached result as in OSWorld) and for formulas.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
from openpyxl.utils.cell import range_boundaries
from openpyxl.workbook import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from harness.kernel.core import StateActError


@dataclass
class Book:
    """One workbook opened twice: computed values (`values`) and formulas (`formulas`)."""

    path: Path
    values: Workbook
    formulas: Workbook
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def open(cls, path: str | Path | None, role: str) -> Book:
        if path is None:
            raise StateActError(f"the {role} spreadsheet file does not exist")
        path = Path(path)
        if not path.is_file():
            raise StateActError(f"the {role} spreadsheet {path.name} does not exist")
        try:
            values = openpyxl.load_workbook(path, data_only=True)
            formulas = openpyxl.load_workbook(path, data_only=False)
        except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
            raise StateActError(
                f"the {role} spreadsheet {path.name} cannot be read ({exc})"
            ) from None
        return cls(path, values, formulas)

    def frame(self, name: str) -> pd.DataFrame:
        if name not in self.frames:
            self.frames[name] = pd.read_excel(self.path, sheet_name=name, engine="openpyxl")
        return self.frames[name]


@dataclass
class Books:
    result: Book
    expected: Book | None

    def sheet_name(self, ref: Any, default: str) -> tuple[Book, str]:
        """The workbook and sheet name a sheet reference points to; `default` is `R` or `E`."""
        text = str(ref)
        if isinstance(ref, int) and not isinstance(ref, bool):
            side, kind, key = default, "I", text
        elif len(text) > 2 and text[0] in "RE" and text[1] in "IN":
            side, kind, key = text[0], text[1], text[2:]
        else:
            raise StateActError(
                f"sheet reference {ref!r} is not an index, RI<n>, RN<name>, EI<n> or EN<name>"
            )
        book = self.result if side == "R" else self.expected
        if book is None:
            raise StateActError(
                f"sheet reference {ref!r} needs an expected workbook, and there is none"
            )
        names = book.values.sheetnames
        if kind == "N":
            if key not in names:
                raise StateActError(f"sheet reference {ref!r}: no sheet named {key!r} in {names}")
            return book, key
        if not key.lstrip("-").isdigit() or not -len(names) <= int(key) < len(names):
            raise StateActError(f"sheet reference {ref!r}: no sheet at that index in {names}")
        return book, names[int(key)]

    def sheets(self, ref: Any, default: str) -> tuple[Book, Worksheet, Worksheet]:
        """(book, values sheet, formulas sheet) for a reference."""
        book, name = self.sheet_name(ref, default)
        return book, book.values[name], book.formulas[name]


def color(value: Any) -> Any:
    """An openpyxl colour as its ARGB string (theme/indexed colours as such)."""
    if value is None:
        return None
    rgb = getattr(value, "rgb", None)
    return rgb if isinstance(rgb, str) else getattr(value, "theme", None)


def in_merged_range(sheet: Worksheet, coordinate: str) -> bool:
    return any(coordinate in merged for merged in sheet.merged_cells.ranges)


def cell_prop(values: Worksheet, formulas: Worksheet, coordinate: str, prop: str) -> Any:
    """One property of a cell: its computed `value`, `formula`, or a style attribute."""
    cell = values[coordinate]
    readers = {
        "value": lambda: cell.value,
        "formula": lambda: formulas[coordinate].value,
        "number_format": lambda: cell.number_format,
        "font_name": lambda: cell.font.name,
        "font_size": lambda: cell.font.size,
        "font_bold": lambda: bool(cell.font.bold),
        "font_italic": lambda: bool(cell.font.italic),
        "font_underline": lambda: cell.font.underline,
        "font_strike": lambda: bool(cell.font.strike),
        "font_color": lambda: color(cell.font.color),
        "bgcolor": lambda: color(cell.fill.fgColor) if cell.fill.fill_type else None,
        "fill_type": lambda: cell.fill.fill_type,
        "hyperlink": lambda: cell.hyperlink.target if cell.hyperlink else None,
        "merge": lambda: in_merged_range(values, coordinate),
        "horizontal_alignment": lambda: cell.alignment.horizontal,
        "vertical_alignment": lambda: cell.alignment.vertical,
        "wrap_text": lambda: bool(cell.alignment.wrap_text),
    }
    if prop not in readers:
        raise StateActError(f"unknown cell property {prop!r}")
    return readers[prop]()


def cell_coordinates(cell_range: str) -> list[str]:
    min_col, min_row, max_col, max_row = range_boundaries(cell_range)
    return [
        f"{openpyxl.utils.get_column_letter(c)}{r}"
        for r in range(min_row, max_row + 1)
        for c in range(min_col, max_col + 1)
    ]


def range_between(ranges: str, ref: list[str]) -> bool:
    """`spreadsheet_range`: the ranges cover `ref[0]` and lie within `ref[1]` (when given)."""
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
