"""Cases for compare_table's chart rule: types, titles, series references, anchors, legends."""

from __future__ import annotations

from openpyxl.chart import BarChart, LineChart, PieChart, Reference
from openpyxl.drawing.spreadsheet_drawing import AnchorMarker, TwoCellAnchor

from tests.osworld_cases.sheet_gen_common import CaseSet, Tweak
from tests.osworld_cases.sheet_gen_data import pair
from tests.osworld_cases.sheet_gen_objects import GRID, both, chain, rule2


def add_chart(
    kind: str = "bar",
    title: str | None = "Scores",
    cols: tuple = (2, 2),
    rows: int = 5,
    anchor: str = "D2",
    bar_dir: str = "col",
    legend: str | None = "r",
    x_title: str | None = None,
) -> Tweak:
    def tweak(wb) -> None:
        ws = wb.active
        chart = {"bar": BarChart, "line": LineChart, "pie": PieChart}[kind]()
        data = Reference(ws, min_col=cols[0], max_col=cols[1], min_row=1, max_row=rows)
        chart.add_data(data, titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=rows))
        if title is not None:
            chart.title = title
        if kind == "bar":
            chart.type = bar_dir
        if legend is None:
            chart.legend = None
        else:
            chart.legend.position = legend
        if x_title is not None:
            chart.x_axis.title = x_title
        ws.add_chart(chart, anchor)

    return tweak


def chart_cases(cases: CaseSet) -> None:
    def ch(*props: str) -> list[dict]:
        return rule2("chart", chart_props=list(props))

    both(cases, "chart-type-same", ch("type"), add_chart(), add_chart())
    both(cases, "chart-type-differs", ch("type"), add_chart("line"), add_chart())
    both(cases, "chart-none", ch("type"), None, None)
    both(cases, "chart-missing", ch("type"), None, add_chart())
    both(cases, "chart-title-same", ch("title", "type"), add_chart(), add_chart())
    both(cases, "chart-title-differs", ch("title"), add_chart(title="Other"), add_chart())
    both(cases, "chart-title-none", ch("title"), add_chart(title=None), add_chart())
    both(cases, "chart-series-range-differs", ch("type"), add_chart(rows=4), add_chart())
    both(cases, "chart-series-ignored-title", ch(), add_chart(title="X"), add_chart())
    both(cases, "chart-series-differs-no-props", ch(), add_chart(rows=4), add_chart())
    both(cases, "chart-anchor-same", ch("anchor"), add_chart(), add_chart())
    both(cases, "chart-anchor-differs", ch("anchor"), add_chart(anchor="F8"), add_chart())
    both(cases, "chart-anchor-row-only", ch("anchor"), add_chart(anchor="D3"), add_chart())
    both(cases, "chart-legend-differs", ch("legend"), add_chart(legend="b"), add_chart())
    both(cases, "chart-legend-none", ch("legend"), add_chart(legend=None), add_chart())
    both(cases, "chart-direction-same", ch("direction"), add_chart(), add_chart())
    both(cases, "chart-direction-differs", ch("direction"), add_chart(bar_dir="bar"), add_chart())
    both(cases, "chart-direction-line", ch("direction"), add_chart("line"), add_chart("line"))
    both(cases, "chart-width-height", ch("width", "height"), add_chart(), add_chart())
    both(cases, "chart-xtitle", ch("xtitle"), add_chart(x_title="Item"), add_chart(x_title="Item"))
    both(
        cases,
        "chart-xtitle-differs",
        ch("xtitle"),
        add_chart(x_title="It"),
        add_chart(x_title="Item"),
    )
    both(cases, "chart-ytitle-none", ch("ytitle"), add_chart(), add_chart())
    both(
        cases,
        "chart-two-same-series",
        ch("type"),
        chain(add_chart(), add_chart("line")),
        add_chart("line"),
    )
    both(
        cases,
        "chart-two-charts-order",
        ch("type"),
        chain(add_chart(rows=4), add_chart("line")),
        chain(add_chart("line"), add_chart(rows=4, anchor="J2")),
    )
    both(cases, "chart-pie", ch("type", "title"), add_chart("pie"), add_chart("pie"))


def two_cell_chart(start: tuple[int, int], end: tuple[int, int], edit_as: str = "twoCell"):
    def tweak(wb) -> None:
        ws = wb.active
        chart = BarChart()
        chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=5), titles_from_data=True)
        anchor = TwoCellAnchor(editAs=edit_as)
        anchor._from = AnchorMarker(col=start[0], row=start[1])
        anchor.to = AnchorMarker(col=end[0], row=end[1])
        chart.anchor = anchor
        ws.add_chart(chart)

    return tweak


def anchor_cases(cases: CaseSet) -> None:
    rule = rule2("chart", chart_props=["anchor"])
    for cid, result, expected in [
        ("chart-2cell-same", two_cell_chart((3, 1), (9, 15)), two_cell_chart((3, 1), (9, 15))),
        ("chart-2cell-start-row", two_cell_chart((3, 2), (9, 15)), two_cell_chart((3, 1), (9, 15))),
        ("chart-2cell-start-col", two_cell_chart((4, 1), (9, 15)), two_cell_chart((3, 1), (9, 15))),
        ("chart-2cell-end-row", two_cell_chart((3, 1), (9, 16)), two_cell_chart((3, 1), (9, 15))),
        (
            "chart-2cell-edit-as",
            two_cell_chart((3, 1), (9, 15), "oneCell"),
            two_cell_chart((3, 1), (9, 15)),
        ),
    ]:
        pair(cases, cid, GRID, GRID, rule, rtweak=result, etweak=expected)
