"""compare_table rules and compare_csv on workbooks generated with openpyxl."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation

from harness.kernel.core import StateActError
from tasks.metrics.table import compare_csv, compare_table

ROWS = [["Name", "Score", "Price"], ["ann", 1, 2.00001], ["bob", 2, 3.5]]


def make_book(path: Path, rows=ROWS, sheets=("Sheet1",), edit=None) -> str:
    book = openpyxl.Workbook()
    first = book.active
    first.title = sheets[0]
    for name in sheets[1:]:
        book.create_sheet(name)
    for row in rows:
        first.append(row)
    if edit:
        edit(first)
    book.save(path)
    return str(path)


def table(result, expected, *rules) -> float:
    return compare_table(result, expected, rules=list(rules))


def test_sheet_data_equal_rounded_and_different(tmp_path):
    gold = make_book(tmp_path / "gold.xlsx")
    same = make_book(
        tmp_path / "same.xlsx",
        rows=[["Name", "Score", "Price"], ["ann", 1.0, 2.0], ["bob", 2, 3.5]],
    )
    rule = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    assert table(same, gold, rule) == 1.0  # 2.00001 and 2.0 agree at the default precision 4
    assert table(same, gold, {**rule, "precision": 6}) == 0.0
    other = make_book(
        tmp_path / "other.xlsx", rows=[["Name", "Score", "Price"], ["ann", 1, 2], ["bob", 2, 9]]
    )
    assert table(other, gold, rule) == 0.0
    upper = make_book(
        tmp_path / "upper.xlsx", rows=[["NAME", "SCORE", "PRICE"], ["ANN", 1, 2], ["BOB", 2, 3.5]]
    )
    assert table(upper, gold, rule) == 0.0
    assert table(upper, gold, {**rule, "ignore_case": True}) == 1.0


def test_sheet_references_and_errors(tmp_path):
    gold = make_book(tmp_path / "gold.xlsx", sheets=("Data", "Sheet2"))
    result = make_book(tmp_path / "res.xlsx", sheets=("Data", "Sheet2"))
    for left, right in [("RNData", "ENData"), ("RI0", "EI0"), (0, "EI0"), ("RI-2", "EN" + "Data")]:
        assert (
            table(result, gold, {"type": "sheet_data", "sheet_idx0": left, "sheet_idx1": right})
            == 1.0
        )
    with pytest.raises(StateActError, match="'RNNope'"):
        table(result, gold, {"type": "sheet_data", "sheet_idx0": "RNNope", "sheet_idx1": "EI0"})
    with pytest.raises(StateActError, match="'EI5'"):
        table(result, gold, {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI5"})
    with pytest.raises(StateActError, match="'XX1'"):
        table(result, gold, {"type": "sheet_data", "sheet_idx0": "XX1", "sheet_idx1": "EI0"})
    with pytest.raises(StateActError, match="does not exist"):
        table(str(tmp_path / "absent.xlsx"), gold, {"type": "sheet_name"})
    (tmp_path / "corrupt.xlsx").write_bytes(b"not a zip")
    with pytest.raises(StateActError, match="cannot be read"):
        table(str(tmp_path / "corrupt.xlsx"), gold, {"type": "sheet_name"})
    with pytest.raises(StateActError, match="no_such_rule"):
        table(result, gold, {"type": "no_such_rule"})


def test_sheet_name(tmp_path):
    gold = make_book(tmp_path / "gold.xlsx", sheets=("A", "B"))
    assert (
        table(make_book(tmp_path / "r1.xlsx", sheets=("A", "B")), gold, {"type": "sheet_name"})
        == 1.0
    )
    assert (
        table(make_book(tmp_path / "r2.xlsx", sheets=("B", "A")), gold, {"type": "sheet_name"})
        == 0.0
    )


def test_check_cell_methods_and_styles(tmp_path):
    def style(sheet):
        sheet["A1"].font = Font(name="Arial", bold=True, color="FFFF0000", size=14)
        sheet["A1"].fill = PatternFill(fill_type="solid", fgColor="FF00FF00")
        sheet["B2"].number_format = "0.00%"
        sheet["C5"] = "=B2+B3"
        sheet.merge_cells("D1:E1")
        sheet["A7"] = "Pass, Fail"

    result = make_book(tmp_path / "r.xlsx", edit=style)

    def cell(coordinate, **props):
        return compare_table(
            result,
            rules=[
                {"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate, "props": props}
            ],
        )

    assert (
        cell("A1", value={"method": "eq", "ref": "Name"}, font_bold={"method": "eq", "ref": True})
        == 1.0
    )
    assert (
        cell(
            "A1",
            font_color={"method": "eq", "ref": "FFFF0000"},
            bgcolor={"method": "eq", "ref": "FF00FF00"},
        )
        == 1.0
    )
    assert (
        cell(
            "A1", font_name={"method": "eq", "ref": "Arial"}, font_size={"method": "ge", "ref": 14}
        )
        == 1.0
    )
    assert cell("A1", font_italic={"method": "eq", "ref": True}) == 0.0
    assert cell("C3", value={"method": "approx:0.01", "ref": 3.505}) == 1.0
    assert cell("C3", value={"method": "approx:0.001", "ref": 3.51}) == 0.0
    assert cell("B3", value={"method": "lt", "ref": 3}) == 1.0
    assert cell("B3", value={"method": "ne", "ref": 2}) == 0.0
    assert cell("A2", value={"method": "re.I", "ref": "^ANN$"}) == 1.0
    assert cell("A2", value={"method": "re", "ref": "^ANN$"}) == 0.0
    assert cell("B3", value={"method": "range.ie", "ref": [2, 3]}) == 1.0
    assert cell("B3", value={"method": "range.ei", "ref": [2, 3]}) == 0.0
    assert cell("A7", value={"method": "str_set_eq", "ref": ["Fail", "Pass"]}) == 1.0
    assert cell("A7", value={"method": "str_list_eq", "ref": ["Fail", "Pass"]}) == 0.0
    assert cell("B2", number_format={"method": "eq", "ref": "0.00%"}) == 1.0
    assert cell("E1", merge={"method": "eq", "ref": True}) == 1.0
    assert cell("F1", merge={"method": "eq", "ref": True}) == 0.0
    # The formula was written by openpyxl, so it has no computed value; the formula is readable.
    assert (
        cell("C5", formula={"method": "eq", "ref": "=B2+B3"}, value={"method": "eq", "ref": None})
        == 1.0
    )
    with pytest.raises(StateActError, match="unknown comparison method"):
        cell("A1", value={"method": "similar", "ref": "x"})
    with pytest.raises(StateActError, match="unknown cell property"):
        cell("A1", shininess={"method": "eq", "ref": 1})


def test_sheet_fuzzy(tmp_path):
    gold = make_book(
        tmp_path / "g.xlsx",
        rows=[["Name", "Address", "Phone"], ["Ann Lee", "1 Main Road", "+1 (555) 123-4567"]],
    )
    result = make_book(
        tmp_path / "r.xlsx",
        rows=[["name ", "Address", "Phone"], ["ann lee", "1 main rd", "Call 15551234567 now"]],
    )

    def fuzzy(*subrules):
        return table(
            result,
            gold,
            {
                "type": "sheet_fuzzy",
                "sheet_idx0": "RNSheet1",
                "sheet_idx1": "ENSheet1",
                "rules": list(subrules),
            },
        )

    assert fuzzy({"range": ["A1:A2"], "type": "exact_match"}) == 0.0
    assert (
        fuzzy(
            {"range": ["A1:A2"], "type": "exact_match", "ignore_case": True, "trim_trailings": " "}
        )
        == 1.0
    )
    assert (
        fuzzy(
            {
                "range": ["B2"],
                "type": "exact_match",
                "ignore_case": True,
                "normalization": [["Rd", "Road"], ["rd", "road"]],
            }
        )
        == 1.0
    )
    assert (
        fuzzy({"range": ["B2"], "type": "fuzzy_match", "threshold": 70, "ignore_case": True}) == 1.0
    )
    assert fuzzy({"range": ["B2"], "type": "fuzzy_match", "threshold": 99}) == 0.0
    assert (
        fuzzy({"range": ["C2"], "type": "includes", "trim_leadings": "+ ", "ignore_chars": " ()-"})
        == 1.0
    )
    assert (
        fuzzy({"range": ["C2"], "type": "includes", "trim_leadings": "+ "}) == 0.0
    )  # "Call..." keeps letters
    assert fuzzy({"range": ["B1:C1"], "type": "included_by"}) == 1.0


def test_style_freeze_zoom_row_props_and_validation(tmp_path):
    def gold_edit(sheet):
        sheet["A2"].fill = PatternFill(fill_type="solid", fgColor="FFFFFF00")
        sheet.freeze_panes = "B2"
        sheet.row_dimensions[3].hidden = True
        sheet.sheet_view.zoomScale = 150

    gold = make_book(tmp_path / "g.xlsx", edit=gold_edit)
    same = make_book(tmp_path / "s.xlsx", edit=gold_edit)
    plain = make_book(tmp_path / "p.xlsx")
    for rule in (
        {"type": "style", "props": ["bgcolor", "font_bold"]},
        {"type": "freeze"},
        {"type": "row_props", "props": ["hidden"]},
    ):
        rule = {**rule, "sheet_idx0": 0, "sheet_idx1": "EI0"}
        assert table(same, gold, rule) == 1.0, rule
        assert table(plain, gold, rule) == 0.0, rule
    assert (
        compare_table(gold, rules=[{"type": "zoom", "sheet_idx": 0, "method": "gt", "ref": 120}])
        == 1.0
    )
    assert (
        compare_table(plain, rules=[{"type": "zoom", "sheet_idx": 0, "method": "gt", "ref": 120}])
        == 0.0
    )

    def validated(sheet):
        validation = DataValidation(type="list", formula1='"Pass,Fail,Held"')
        validation.add("D2:D29")
        sheet.add_data_validation(validation)

    book = make_book(tmp_path / "dv.xlsx", edit=validated)
    rule = {
        "type": "data_validation",
        "sheet_idx": 0,
        "dv_props": [
            {
                "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]},
                "type": {"method": "eq", "ref": "list"},
                "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
            }
        ],
    }
    assert compare_table(book, rules=[rule]) == 1.0
    assert compare_table(plain, rules=[rule]) == 0.0


def test_sheet_print_uses_the_csv_exports(tmp_path):
    gold = make_book(tmp_path / "g.xlsx")
    result = make_book(tmp_path / "r.xlsx")
    (tmp_path / "g-Sheet1.csv").write_text("a,b\n1,2\n")
    rule = {"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}
    with pytest.raises(StateActError, match="r-Sheet1.csv"):
        table(result, gold, rule)
    (tmp_path / "r-Sheet1.csv").write_text("A,b\n1,2\n")
    assert table(result, gold, rule) == 0.0
    assert table(result, gold, {**rule, "ignore_case": True}) == 1.0


def test_compare_csv(tmp_path):
    (tmp_path / "r.csv").write_text("a,b\n1,2\n")
    (tmp_path / "g1.csv").write_text("a,b\n1,3\n")
    (tmp_path / "g2.csv").write_text("a,b\n1,2\n")
    assert compare_csv(str(tmp_path / "r.csv"), str(tmp_path / "g2.csv")) == 1.0
    assert compare_csv(str(tmp_path / "r.csv"), str(tmp_path / "g1.csv")) == 0.0
    assert (
        compare_csv(str(tmp_path / "r.csv"), [str(tmp_path / "g1.csv"), str(tmp_path / "g2.csv")])
        == 1.0
    )
    assert compare_csv(None, str(tmp_path / "g2.csv")) == 0.0


def test_row_props_treat_a_missing_row_as_default(tmp_path):
    """LibreOffice writes hidden="false" for rows openpyxl leaves out; both mean visible."""
    import openpyxl

    from tasks.metrics.table import compare_table

    gold, mine = openpyxl.Workbook(), openpyxl.Workbook()
    for book in (gold, mine):
        for row in range(1, 5):
            book.active.cell(row=row, column=1, value=row)
    gold.active.row_dimensions[3].hidden = True
    mine.active.row_dimensions[3].hidden = True
    mine.active.row_dimensions[2].hidden = False  # explicit default, as LibreOffice saves it
    gold.save(tmp_path / "gold.xlsx")
    mine.save(tmp_path / "mine.xlsx")
    rules = {"rules": [{"type": "row_props", "props": ["hidden"]}]}
    assert compare_table(str(tmp_path / "mine.xlsx"), str(tmp_path / "gold.xlsx"), **rules) == 1.0
    mine.active.row_dimensions[3].hidden = False
    mine.save(tmp_path / "mine.xlsx")
    assert compare_table(str(tmp_path / "mine.xlsx"), str(tmp_path / "gold.xlsx"), **rules) == 0.0
