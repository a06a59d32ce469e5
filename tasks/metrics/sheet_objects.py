"""Sheet objects as OSWorld's compare_table describes them: charts (keyed by their series
references), sparklines, row and column dimensions, auto-filters, freeze panes, data validations.

Each loader returns a plain value; two sheets agree on a rule when the values are equal. A missing
sheet gives the empty description, as in OSWorld.
"""

from __future__ import annotations

import zipfile
from typing import Any

import lxml.etree
from openpyxl.worksheet.worksheet import Worksheet

from tasks.metrics.sheets import comparison, sheet_xml_name

X14_NS = "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"
XM_NS = "http://schemas.microsoft.com/office/excel/2006/main"


def reference(data: Any) -> str:
    """The formula of a series' values or categories (`numRef` before `strRef`), else ""."""
    for kind in ("numRef", "strRef"):
        ref = getattr(data, kind, None)
        if ref is not None and hasattr(ref, "f"):
            return ref.f
    return ""


def rich_title(title: Any) -> Any:
    """The first run of a title's first paragraph; None when there is none."""
    try:
        return title.tx.rich.p[0].r[0].t
    except (AttributeError, IndexError, TypeError):
        return None


def chart_info(chart: Any, props: set[str]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    if "title" in props:
        info["title"] = rich_title(chart.title)
    if "legend" in props:
        info["legend"] = chart.legend.position if chart.legend is not None else None
    if "anchor" in props:
        anchor = chart.anchor
        # OSWorld lists the end row twice and the start row never; a one-cell anchor (no
        # editAs) makes it fail, which the evaluator scores 0.
        info["anchor"] = [
            anchor.editAs,
            anchor._from.col,
            anchor.to.row,
            anchor.to.col,
            anchor.to.row,
        ]
    if "width" in props:
        info["width"] = chart.width
    if "height" in props:
        info["height"] = chart.height
    if "type" in props:
        info["type"] = chart.tagname
    if "direction" in props:
        info["direction"] = chart.barDir  # only bar charts have one; others fail as in OSWorld
    for axis in ("x", "y", "z"):
        if f"{axis}title" in props:
            try:
                axis_title = getattr(chart, f"{axis}_axis").title
            except AttributeError:
                axis_title = None
            info[f"{axis}title"] = rich_title(axis_title)
    return info


def load_charts(sheet: Worksheet | None, rule: dict) -> dict[str, Any]:
    """{series references: chart properties}; charts with the same series keep the last one."""
    if sheet is None:
        return {}
    props = set(rule.get("chart_props", []))
    charts = {}
    for chart in sheet._charts:
        series = ";".join(f"{reference(s.val)},{reference(s.cat)}" for s in chart.series)
        charts[series] = chart_info(chart, props)
    return charts


def load_sparklines(path: str, sheet_name: str) -> dict[str, str]:
    """{location: data range} of the sheet's sparklines (read from `sheet<sheetId>.xml`)."""
    try:
        with zipfile.ZipFile(path) as archive:
            root = lxml.etree.fromstring(archive.read(sheet_xml_name(archive, sheet_name)))
    except zipfile.BadZipFile:
        return {}
    found = {}
    for sparkline in root.iter(f"{{{X14_NS}}}sparkline"):
        found[sparkline.findtext(f"{{{XM_NS}}}sqref")] = sparkline.findtext(f"{{{XM_NS}}}f")
    return found


def load_dimensions(sheet: Worksheet | None, kind: str, props: list[str]) -> dict:
    """{row number or column letter: {prop: value}} over the dimensions the file records."""
    if sheet is None:
        return {}
    holder = sheet.row_dimensions if kind == "row" else sheet.column_dimensions
    return {key: {p: getattr(dims, p) for p in set(props)} for key, dims in holder.items()}


def load_filter(sheet: Worksheet | None) -> dict[str, Any]:
    """The sheet's auto-filter: range, filtered columns and sort state."""
    if sheet is None:
        return {}
    auto = sheet.auto_filter
    described: dict[str, Any] = {"ref": auto.ref}
    columns = []
    for column in auto.filterColumn:
        item: dict[str, Any] = {
            "col_id": column.colId,
            "hidden_button": column.hiddenButton,
            "show_button": column.showButton,
        }
        if column.filters is not None:
            item["filters_blank"] = column.filters.blank
            item["filters"] = set(column.filters.filter)
        if column.customFilters is not None:
            item["custom_filters_op"] = column.customFilters._and
            item["custom_filters"] = {
                (f.operator, f.val) for f in column.customFilters.customFilter
            }
        columns.append(item)
    described["filter_column"] = sorted(columns, key=lambda d: d["col_id"])
    sort = auto.sortState
    if sort is not None:
        described["sort_state"] = {
            "sort": sort.columnSort,
            "case": sort.caseSensitive,
            "method": sort.sortMethod,
            "ref": sort.ref,
            "condition": [
                {
                    "descending": c.descending,
                    "key": c.sortBy,
                    "ref": c.ref,
                    "custom_list": c.customList,
                    "dxf_id": c.dxfId,
                    "icon": c.iconSet,
                    "iconid": c.iconId,
                }
                for c in sort.sortCondition
            ],
        }
    return described


def freeze_key(sheet: Worksheet) -> tuple:
    """What a freeze looks like regardless of scrolling: the frozen column and row counts.

    The pane's top-left cell is where the unfrozen part is scrolled to, so it counts only for
    split (not frozen) panes.
    """
    pane = sheet.sheet_view.pane
    if pane is None:
        return ("none",)
    state = (pane.state or "").lower()
    columns = int(pane.xSplit) if pane.xSplit is not None else 0
    rows = int(pane.ySplit) if pane.ySplit is not None else 0
    if state in ("frozen", "frozensplit"):
        return ("frozen", columns, rows)
    return ("other", columns, rows, pane.topLeftCell)


def validations_match(sheet: Worksheet, wanted: list[dict]) -> bool:
    """Every validation of the sheet matches one of `wanted`, and there are at least as many.

    That is OSWorld's direction: each existing validation is checked against the wanted
    property sets, not each wanted set looked for among the validations.
    """
    validations = sheet.data_validations.dataValidation
    if len(validations) < len(wanted):
        return False
    for validation in validations:
        if not any(
            all(comparison(getattr(validation, name), check) for name, check in props.items())
            for props in wanted
        ):
            return False
    return True
