"""Cases for compare_table's sheet-object rules: style (with conditional formats), freeze, zoom,
data_validation, row_props, col_props and filter."""

from __future__ import annotations

from typing import Any

from openpyxl.formatting.rule import CellIsRule, FormulaRule, Rule
from openpyxl.styles import Font, PatternFill
from openpyxl.styles.differential import DifferentialStyle
from openpyxl.worksheet.datavalidation import DataValidation

from tests.osworld_cases.sheet_gen_common import CaseSet, Tweak
from tests.osworld_cases.sheet_gen_data import pair

GRID = [["Item", "Score"], ["a", 5], ["b", 15], ["c", 25], ["d", 8]]
RED = "FFFF0000"


def rule2(kind: str, **extra: Any) -> list[dict]:
    return [{"type": kind, "sheet_idx0": 0, "sheet_idx1": "EI0", **extra}]


def both(cases: CaseSet, cid: str, rules: list[dict], rtweak: Tweak | None, etweak: Tweak | None):
    pair(cases, cid, GRID, GRID, rules, rtweak=rtweak, etweak=etweak)


def font_red(*coords: str) -> Tweak:
    def tweak(wb) -> None:
        for c in coords:
            wb.active[c].font = Font(color=RED)

    return tweak


def fill(*coords: str, color: str = RED) -> Tweak:
    def tweak(wb) -> None:
        for c in coords:
            wb.active[c].fill = PatternFill("solid", fgColor=color)

    return tweak


def cf(rule_obj: Any, where: str = "B2:B5") -> Tweak:
    def tweak(wb) -> None:
        wb.active.conditional_formatting.add(where, rule_obj)

    return tweak


def chain(*tweaks: Tweak) -> Tweak:
    def tweak(wb) -> None:
        for t in tweaks:
            t(wb)

    return tweak


def style_cases(cases: CaseSet) -> None:
    fc = rule2("style", props=["font_color"])
    bg = rule2("style", props=["bgcolor"])
    both(cases, "style-font-color-same", fc, font_red("B3"), font_red("B3"))
    both(cases, "style-font-color-differs", fc, font_red("B3"), font_red("B4"))
    both(cases, "style-font-color-none", fc, None, None)
    both(cases, "style-bgcolor-same", bg, fill("A2"), fill("A2"))
    both(cases, "style-bgcolor-differs", bg, fill("A2"), fill("A3"))
    both(cases, "style-bgcolor-shade", bg, fill("A2"), fill("A2", color="FFFE0000"))
    both(cases, "style-bgcolor-empty-cell", bg, fill("E9"), None)
    both(cases, "style-font-empty-cell", fc, font_red("E9"), None)
    both(
        cases,
        "style-bold",
        rule2("style", props=["font_bold"]),
        lambda wb: setattr(wb.active["A2"], "font", Font(bold=True)),
        None,
    )
    both(
        cases,
        "style-bold-false-vs-none",
        rule2("style", props=["font_bold"]),
        lambda wb: setattr(wb.active["A2"], "font", Font(bold=False)),
        None,
    )
    both(
        cases,
        "style-number-format",
        rule2("style", props=["number_format"]),
        lambda wb: setattr(wb.active["B2"], "number_format", "0.00"),
        None,
    )
    both(
        cases,
        "style-number-format-text-cell",
        rule2("style", props=["number_format"]),
        lambda wb: setattr(wb.active["A2"], "number_format", "0.00"),
        None,
    )
    both(cases, "style-fill-type", rule2("style", props=["fill_type"]), fill("A2"), None)
    both(
        cases,
        "style-merge",
        rule2("style", props=["merge"]),
        lambda wb: wb.active.merge_cells("A2:A3"),
        None,
    )
    both(
        cases,
        "style-hyperlink",
        rule2("style", props=["hyperlink"]),
        lambda wb: setattr(wb.active["A2"], "hyperlink", "https://x.org"),
        None,
    )
    both(cases, "style-no-props", rule2("style"), fill("A2"), None)
    both(
        cases,
        "style-two-props",
        rule2("style", props=["font_color", "bgcolor"]),
        chain(font_red("B3"), fill("A2")),
        chain(font_red("B3"), fill("A2")),
    )
    red_font = DifferentialStyle(font=Font(color=RED))
    gt10 = CellIsRule(operator="greaterThan", formula=["10"], font=Font(color=RED))
    both(cases, "style-cf-vs-static", fc, cf(gt10), font_red("B3", "B4"))
    both(cases, "style-cf-vs-static-wrong", fc, cf(gt10), font_red("B3"))
    both(cases, "style-cf-same", fc, cf(gt10), cf(gt10))
    ge15 = CellIsRule(operator="greaterThanOrEqual", formula=["15"], font=Font(color=RED))
    both(cases, "style-cf-ge-vs-gt", fc, cf(ge15), cf(gt10))
    lt = CellIsRule(operator="lessThan", formula=["10"], font=Font(color=RED))
    both(cases, "style-cf-lt", fc, cf(lt), font_red("B2", "B5"))
    btw = CellIsRule(operator="between", formula=["20", "6"], font=Font(color=RED))
    both(cases, "style-cf-between-reversed", fc, cf(btw), font_red("B4", "B5"))
    both(cases, "style-cf-between-reversed-ok", fc, cf(btw), font_red("B3", "B5"))
    blue = DifferentialStyle(font=Font(color="FF0000FF"))
    top_blue = Rule(type="top10", rank=1, dxf=blue)

    def font_blue(wb) -> None:
        for c in ("B3", "B4"):
            wb.active[c].font = Font(color="FF0000FF")

    both(cases, "style-cf-top10-after-cellis", fc, chain(cf(gt10), cf(top_blue)), font_blue)
    nbtw = CellIsRule(operator="notBetween", formula=["6", "20"], font=Font(color=RED))
    both(cases, "style-cf-not-between", fc, cf(nbtw), font_red("B2", "B4"))
    eq = CellIsRule(operator="equal", formula=["15"], font=Font(color=RED))
    both(cases, "style-cf-equal", fc, cf(eq), font_red("B3"))
    ne = CellIsRule(operator="notEqual", formula=["15"], font=Font(color=RED))
    both(cases, "style-cf-not-equal", fc, cf(ne), font_red("B2", "B4", "B5"))
    le = CellIsRule(operator="lessThanOrEqual", formula=["8"], font=Font(color=RED))
    both(cases, "style-cf-le", fc, cf(le), font_red("B2", "B5"))
    ref = CellIsRule(operator="greaterThan", formula=["$D$1"], font=Font(color=RED))
    both(
        cases,
        "style-cf-ref-cell",
        fc,
        chain(cf(ref), lambda wb: wb.active.__setitem__("D1", 10)),
        font_red("B3", "B4", "D1"),
    )
    expr = FormulaRule(formula=["B2>10"], font=Font(color=RED))
    both(cases, "style-cf-expression", fc, cf(expr), font_red("B3", "B4"))
    expr_abs = FormulaRule(formula=["B2>$D$1"], font=Font(color=RED))
    both(
        cases,
        "style-cf-expression-abs",
        fc,
        chain(cf(expr_abs), lambda wb: wb.active.__setitem__("D1", 20)),
        font_red("B4", "D1"),
    )
    text_rule = Rule(
        type="containsText",
        operator="containsText",
        text="b",
        dxf=red_font,
        formula=['NOT(ISERROR(SEARCH("b",A2)))'],
    )
    both(cases, "style-cf-contains-text", fc, cf(text_rule, "A2:A5"), font_red("A3"))
    bad = CellIsRule(operator="greaterThan", formula=["10+"], font=Font(color=RED))
    both(cases, "style-cf-bad-formula", fc, cf(bad), None)
    top = Rule(type="top10", rank=1, dxf=red_font)
    both(cases, "style-cf-top10", fc, cf(top), None)
    bg_rule = CellIsRule(operator="greaterThan", formula=["10"], fill=PatternFill(bgColor=RED))
    both(cases, "style-cf-bgcolor", bg, cf(bg_rule), fill("B3", "B4"))
    both(cases, "style-cf-bgcolor-same", bg, cf(bg_rule), cf(bg_rule))
    text_cmp = CellIsRule(operator="greaterThan", formula=["10"], font=Font(color=RED))
    both(cases, "style-cf-text-cells", fc, cf(text_cmp, "A2:A5"), None)
    both(
        cases,
        "style-sheet-missing",
        rule2("style", props=["font_color"], sheet_idx0="RNNo"),
        None,
        None,
    )


def freeze_cases(cases: CaseSet) -> None:
    fr = rule2("freeze")

    def frz(cell: str | None) -> Tweak:
        return lambda wb: setattr(wb.active, "freeze_panes", cell)

    def scrolled(cell: str, top_left: str) -> Tweak:
        def tweak(wb) -> None:
            wb.active.freeze_panes = cell
            wb.active.sheet_view.pane.topLeftCell = top_left

        return tweak

    def split(wb) -> None:
        from openpyxl.worksheet.views import Pane

        wb.active.sheet_view.pane = Pane(xSplit=1200, ySplit=600, topLeftCell="B3", state="split")

    both(cases, "freeze-none", fr, None, None)
    both(cases, "freeze-same", fr, frz("A2"), frz("A2"))
    both(cases, "freeze-differs", fr, frz("A2"), frz("B2"))
    both(cases, "freeze-vs-none", fr, frz("A2"), None)
    both(cases, "freeze-scrolled", fr, scrolled("A2", "A40"), frz("A2"))
    both(cases, "freeze-cols-rows", fr, frz("C3"), frz("C3"))
    both(cases, "freeze-split-vs-frozen", fr, split, frz("B3"))
    both(cases, "freeze-split-same", fr, split, split)


def zoom_cases(cases: CaseSet) -> None:
    def zoom(scale: int | None) -> Tweak:
        return lambda wb: setattr(wb.active.sheet_view, "zoomScale", scale)

    for cid, scale, method, ref in [
        ("zoom-default-lt", None, "lt", 260),
        ("zoom-default-eq-100", None, "eq", 100),
        ("zoom-300-lt", 300, "lt", 260),
        ("zoom-50-lt", 50, "lt", 260),
        ("zoom-eq-float", 75, "eq", 75.0),
        ("zoom-approx", 90, "approx:5", 88),
        ("zoom-range", 90, "range.ee", [50, 100]),
        ("zoom-ge", 100, "ge", 100),
    ]:
        rule = {"type": "zoom", "sheet_idx": 0, "method": method, "ref": ref}
        pair(cases, cid, GRID, None, [rule], rtweak=zoom(scale))


def dv(**kw: Any) -> Tweak:
    def tweak(wb) -> None:
        wb.active.add_data_validation(DataValidation(**kw))

    return tweak


def dv_cases(cases: CaseSet) -> None:
    listed = {"type": "list", "formula1": '"Pass,Fail,Held"', "sqref": "D2:D29"}
    task_props = {
        "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]},
        "type": {"method": "eq", "ref": "list"},
        "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
    }

    def case(cid: str, tweaks: list[Tweak], props: list[dict]) -> None:
        rule = {"type": "data_validation", "sheet_idx": 0, "dv_props": props}
        pair(cases, cid, GRID, None, [rule], rtweak=chain(*tweaks))

    case("dv-task-pass", [dv(**listed)], [task_props])
    case("dv-task-order", [dv(**{**listed, "formula1": '"Held,Pass,Fail"'})], [task_props])
    case("dv-task-short-range", [dv(**{**listed, "sqref": "D2:D10"})], [task_props])
    case("dv-task-whole-column", [dv(**{**listed, "sqref": "D1:D1048576"})], [task_props])
    case("dv-task-wrong-column", [dv(**{**listed, "sqref": "E2:E29"})], [task_props])
    case("dv-task-none", [], [task_props])
    case("dv-task-extra-validator", [dv(**listed), dv(type="whole", sqref="B2:B5")], [task_props])
    case(
        "dv-two-props-one-validator",
        [dv(**listed)],
        [task_props, {"type": {"method": "eq", "ref": "whole"}}],
    )
    case("dv-empty-props-no-dv", [], [])
    case("dv-empty-props-with-dv", [dv(**listed)], [])
    case(
        "dv-type-whole",
        [dv(type="whole", operator="between", formula1="1", formula2="9", sqref="B2:B5")],
        [
            {
                "type": {"method": "eq", "ref": "whole"},
                "operator": {"method": "eq", "ref": "between"},
                "formula2": {"method": "eq", "ref": "9"},
            }
        ],
    )
    case(
        "dv-allow-blank-default", [dv(**listed)], [{"allow_blank": {"method": "eq", "ref": False}}]
    )
    case(
        "dv-allowblank-alias",
        [dv(**listed, allow_blank=True)],
        [{"allowBlank": {"method": "eq", "ref": True}}],
    )
    case("dv-showdropdown-none", [dv(**listed)], [{"showDropDown": {"method": "eq", "ref": None}}])
    case(
        "dv-error-message",
        [dv(**listed, error="Bad", showErrorMessage=True)],
        [
            {
                "error": {"method": "eq", "ref": "Bad"},
                "showErrorMessage": {"method": "eq", "ref": True},
            }
        ],
    )
    case("dv-formula1-re", [dv(**listed)], [{"formula1": {"method": "re", "ref": "Pass"}}])
    case(
        "dv-str-list-order",
        [dv(**listed)],
        [{"formula1": {"method": "str_list_eq", "ref": ["Pass", "Fail", "Held"]}}],
    )


def dims_cases(cases: CaseSet) -> None:
    hidden = rule2("row_props", props=["hidden"])

    def hide_rows(*rows: int) -> Tweak:
        def tweak(wb) -> None:
            for r in rows:
                wb.active.row_dimensions[r].hidden = True

        return tweak

    def shown_rows(*rows: int) -> Tweak:
        def tweak(wb) -> None:
            for r in rows:
                wb.active.row_dimensions[r].height = 15

        return tweak

    both(cases, "rows-hidden-same", hidden, hide_rows(3), hide_rows(3))
    both(cases, "rows-hidden-differs", hidden, hide_rows(3), hide_rows(4))
    both(cases, "rows-hidden-vs-none", hidden, hide_rows(3), None)
    both(cases, "rows-none", hidden, None, None)
    both(cases, "rows-explicit-default", hidden, shown_rows(2), None)
    both(cases, "rows-height", rule2("row_props", props=["height"]), shown_rows(2), shown_rows(2))
    both(cases, "rows-no-props-dims-differ", rule2("row_props"), shown_rows(2), None)

    def col(letter: str, **attrs: Any) -> Tweak:
        def tweak(wb) -> None:
            for k, v in attrs.items():
                setattr(wb.active.column_dimensions[letter], k, v)

        return tweak

    width = rule2("col_props", props=["width"])
    both(cases, "cols-width-same", width, col("A", width=20), col("A", width=20))
    both(cases, "cols-width-differs", width, col("A", width=20), col("A", width=21))
    both(
        cases,
        "cols-hidden",
        rule2("col_props", props=["hidden"]),
        col("B", hidden=True),
        col("B", hidden=True),
    )
    both(
        cases,
        "cols-hidden-vs-none",
        rule2("col_props", props=["hidden"]),
        col("B", hidden=True),
        None,
    )
    both(cases, "cols-none", width, None, None)


def filter_cases(cases: CaseSet) -> None:
    flt = rule2("filter")

    def auto(ref: str | None, values: list[str] | None = None, col: int = 0) -> Tweak:
        def tweak(wb) -> None:
            wb.active.auto_filter.ref = ref
            if values is not None:
                wb.active.auto_filter.add_filter_column(col, values)

        return tweak

    def sort(wb) -> None:
        wb.active.auto_filter.ref = "A1:B5"
        wb.active.auto_filter.add_sort_condition("B2:B5", descending=True)

    both(cases, "filter-none", flt, None, None)
    both(cases, "filter-same-ref", flt, auto("A1:B5"), auto("A1:B5"))
    both(cases, "filter-ref-differs", flt, auto("A1:B5"), auto("A1:B4"))
    both(cases, "filter-vs-none", flt, auto("A1:B5"), None)
    both(cases, "filter-values-same", flt, auto("A1:B5", ["a", "b"]), auto("A1:B5", ["b", "a"]))
    both(cases, "filter-values-differ", flt, auto("A1:B5", ["a"]), auto("A1:B5", ["b"]))
    both(cases, "filter-column-differs", flt, auto("A1:B5", ["5"], 1), auto("A1:B5", ["5"], 0))
    both(cases, "filter-sort-state", flt, sort, sort)
    both(cases, "filter-sort-vs-plain", flt, sort, auto("A1:B5"))
