"""compare_table rules and compare_csv on workbooks generated with openpyxl."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import PatternFill
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


def test_a_missing_or_broken_result_scores_zero_with_a_reason(tmp_path):
    rules = {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
    with pytest.raises(StateActError, match="does not exist"):
        compare_table(str(tmp_path / "nothing.xlsx"), None, **rules)
    (tmp_path / "broken.xlsx").write_bytes(b"garbage")
    with pytest.raises(StateActError, match="broken.xlsx cannot be read"):
        compare_table(str(tmp_path / "broken.xlsx"), None, **rules)


def test_rules_must_be_a_list_of_typed_rules(tmp_path):
    with pytest.raises(StateActError, match="options.rules"):
        compare_table(str(tmp_path / "any.xlsx"), None)
    with pytest.raises(StateActError, match="options.rules"):
        compare_table(str(tmp_path / "any.xlsx"), None, rules=[{"sheet_idx0": 0}])
