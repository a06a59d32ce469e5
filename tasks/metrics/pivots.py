"""The `pivot_table` rule of `compare_table`, as OSWorld describes a pivot table.

OSWorld keys each pivot table of a sheet by its source (cache type, the source range narrowed to
the fields that have items, and the source sheet) and compares the listed `pivot_props`. Field
positions are shifted by the number of leading fields without items ("left bias"), so a source
range that starts earlier compares equal once narrowed.
"""

from __future__ import annotations

import itertools
from typing import Any

from openpyxl.utils.cell import coordinate_to_tuple
from openpyxl.worksheet.worksheet import Worksheet


def item_selection(pivot: Any) -> tuple[list[list[tuple]], int, int]:
    """The item (hidden, index) lists of the fields, trimmed of empty fields at both ends,
    with the number trimmed on the left and on the right."""
    raw = [[(i.h, i.x) for i in f.items if i.x is not None] for f in pivot.pivotFields]
    left_trimmed = list(itertools.dropwhile(lambda r: len(r) == 0, raw))
    left = len(raw) - len(left_trimmed)
    trimmed = list(itertools.dropwhile(lambda r: len(r) == 0, reversed(left_trimmed)))[::-1]
    right = len(left_trimmed) - len(trimmed)
    return trimmed, left, right


def source_key(pivot: Any, left: int, right: int) -> str:
    source = pivot.cache.cacheSource
    start, end = source.worksheetSource.ref.split(":")
    first = coordinate_to_tuple(start)
    last = coordinate_to_tuple(end)
    first = (first[0], first[1] + left)
    last = (last[0], last[1] - right)
    return f"{source.type};{first}:{last};{source.worksheetSource.sheet}"


def pivot_info(pivot: Any, props: set[str]) -> tuple[str, dict[str, Any]]:
    selection, left, right = item_selection(pivot)
    info: dict[str, Any] = {}
    if "name" in props:
        info["name"] = pivot.name
    for prop, attribute in (
        ("show_total", "visualTotals"),
        ("show_empty_row", "showEmptyRow"),
        ("show_empty_col", "showEmptyCol"),
        ("show_headers", "showHeaders"),
    ):
        if prop in props:
            info[prop] = getattr(pivot, attribute)
    if "location" in props:
        info["location"] = pivot.location
    if "filter" in props or "selection" in props:
        info["selection"] = selection if "ordered" in props else [set(r) for r in selection]
    if "filter" in props:
        info["filter_fields"] = {f.fld for f in pivot.pageFields}
    if "col_fields" in props:
        info["col_fields"] = [f.x - left for f in pivot.colFields]
    if "row_fields" in props:
        info["row_fields"] = [f.x - left for f in pivot.rowFields]
    if "data_fields" in props:
        named = "data_fields_name" in props
        info["data_fields"] = [
            f"{f.fld - left:d};{f.name if named else ''};{f.subtotal};{f.showDataAs}"
            for f in pivot.dataFields
        ]
    return source_key(pivot, left, right), info


def load_pivots(sheet: Worksheet | None, rule: dict) -> dict[str, Any]:
    """{source key: pivot properties} for the sheet's pivot tables."""
    if sheet is None:
        return {}
    props = set(rule.get("pivot_props", []))
    return dict(pivot_info(p, props) for p in sheet._pivots)
