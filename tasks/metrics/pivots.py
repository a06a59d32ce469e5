"""The `pivot_table` rule of `compare_table`: the sheets hold the same pivot table definitions.

A pivot table is read from the workbook's pivot parts (openpyxl keeps them as `ws._pivots`, each
with its cache definition) and described by field *names* from the cache, so that two files which
number their cache fields differently still compare equal. The tables of a sheet are compared as
an unordered collection: LibreOffice does not keep the order in which they were made.
"""

from __future__ import annotations

from typing import Any

from openpyxl.worksheet.worksheet import Worksheet

from harness.kernel.core import StateActError
from tasks.metrics.sheets import Books

VALUES_FIELD = -2
"""The `x` index of the pseudo-field 'Values' (the data fields laid out as a row or column)."""
DEFAULT_PROPS = ["source", "row_fields", "col_fields", "filter", "data_fields"]


def field_name(names: list[str], index: int | None) -> str:
    if index == VALUES_FIELD:
        return "<values>"
    if index is None or not 0 <= index < len(names):
        raise StateActError(f"a pivot table names field {index}, which its cache does not have")
    return names[index]


def cache_field_names(pivot: Any) -> list[str]:
    cache = getattr(pivot, "cache", None)
    if cache is None:
        raise StateActError(f"pivot table {pivot.name!r} has no cache definition")
    return [field.name for field in cache.cacheFields]


def source_of(pivot: Any) -> tuple[str | None, str | None] | None:
    source = pivot.cache.cacheSource
    sheet = getattr(source, "worksheetSource", None)
    if sheet is None:
        return None
    # A named range source has `name` instead of ref and sheet.
    ref = sheet.ref.replace("$", "").upper() if sheet.ref else sheet.name
    return (sheet.sheet, ref)


def pivot_props(pivot: Any) -> dict[str, Any]:
    """Every comparable property of one pivot table, with fields as names."""
    names = cache_field_names(pivot)
    return {
        "name": pivot.name,
        "source": source_of(pivot),
        "location": pivot.location.ref if pivot.location is not None else None,
        "row_fields": [field_name(names, f.x) for f in pivot.rowFields],
        "col_fields": [field_name(names, f.x) for f in pivot.colFields],
        "filter": sorted(field_name(names, f.fld) for f in pivot.pageFields),
        "data_fields": sorted(
            (field_name(names, f.fld), f.subtotal or "sum", f.showDataAs or "normal")
            for f in pivot.dataFields
        ),
    }


def sheet_pivots(sheet: Worksheet, props: list[str]) -> list[str]:
    """The sheet's pivot tables reduced to `props`, in a canonical order."""
    described = []
    for pivot in getattr(sheet, "_pivots", []):
        everything = pivot_props(pivot)
        unknown = [p for p in props if p not in everything]
        if unknown:
            raise StateActError(
                f"unknown pivot_props {unknown[0]!r}; known: {', '.join(sorted(everything))}"
            )
        described.append(repr({p: everything[p] for p in props}))
    return sorted(described)


def rule_pivot_table(books: Books, rule: dict) -> bool:
    """Both sheets hold the same pivot tables, compared in the listed `pivot_props`."""
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    props = rule.get("pivot_props") or DEFAULT_PROPS
    want = sheet_pivots(expected, props)
    if not want:
        raise StateActError(f"the expected sheet {expected.title!r} has no pivot table")
    return sheet_pivots(result, props) == want
