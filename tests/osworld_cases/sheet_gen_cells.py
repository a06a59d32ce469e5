"""Cases for compare_table's check_cell rule (values, regex flags, styles) and compare_csv."""

from __future__ import annotations

import datetime as dt
from typing import Any

from openpyxl.styles import Font, PatternFill

from tests.osworld_cases.sheet_gen_common import CaseSet, Tweak, book, text
from tests.osworld_cases.sheet_gen_data import swap_sheet_ids

ROWS = [
    ["Label", "Num", "Int", "Text", "Flag", "Date", "Empty"],
    ["Total", 3.14159, 42, "Hello World", True, dt.datetime(2024, 1, 5), None],
    ["  padded  ", 0.1, -7, "hello\nworld", False, "2024-01-05", ""],
]


def styled(wb) -> None:
    ws = wb.active
    ws["A2"].font = Font(bold=True, italic=True, color="FFFF0000", name="Arial", size=14)
    ws["A2"].fill = PatternFill("solid", fgColor="FFFFFF00")
    ws["B2"].number_format = "0.00"
    ws["D2"].hyperlink = "https://example.com/x"
    ws.merge_cells("A5:B6")
    ws["A5"] = "merged"
    ws["C2"] = "=B2*2"


def cell_case(
    cases: CaseSet,
    cid: str,
    coordinate: str,
    props: dict,
    tweak: Tweak | None = styled,
    **rule: Any,
) -> None:
    folder = cases.folder(cid)
    book(folder / "result.xlsx", {"Sheet1": ROWS, "Second": [["x", 7]]}, tweak)
    full = {"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate, "props": props, **rule}
    cases.add(cid, "compare_table", "result.xlsx", None, {"rules": [full]})


def m(method: str, ref: Any) -> dict:
    return {"method": method, "ref": ref}


def check_cell_cases(cases: CaseSet) -> None:
    v = "value"
    cell_case(cases, "cell-eq-text", "D2", {v: m("eq", "Hello World")})
    cell_case(cases, "cell-eq-text-case", "D2", {v: m("eq", "hello world")})
    cell_case(cases, "cell-eq-float", "B2", {v: m("eq", 3.14159)})
    cell_case(cases, "cell-eq-int-cell", "C3", {v: m("eq", -7)})
    cell_case(cases, "cell-eq-int-as-text", "C3", {v: m("eq", "-7")})
    cell_case(cases, "cell-eq-bool-true", "E2", {v: m("eq", True)})
    cell_case(cases, "cell-eq-bool-none", "E2", {v: m("eq", None)})
    cell_case(cases, "cell-eq-false-vs-none", "E3", {v: m("eq", False)})
    cell_case(cases, "cell-eq-empty-none", "G2", {v: m("eq", None)})
    cell_case(cases, "cell-eq-emptystring-none", "G3", {v: m("eq", None)})
    cell_case(cases, "cell-eq-emptystring-empty", "G3", {v: m("eq", "")})
    cell_case(cases, "cell-eq-padded", "A3", {v: m("eq", "padded")})
    cell_case(cases, "cell-eq-padded-exact", "A3", {v: m("eq", "  padded  ")})
    cell_case(cases, "cell-eq-date-serial", "F2", {v: m("eq", 45296.0)})
    cell_case(cases, "cell-eq-date-text", "F3", {v: m("eq", "2024-01-05")})
    cell_case(cases, "cell-eq-formula", "C2", {v: m("eq", 6.28318)})
    cell_case(cases, "cell-eq-formula-none", "C2", {v: m("eq", None)})
    cell_case(cases, "cell-ne", "D2", {v: m("ne", "x")})
    cell_case(cases, "cell-gt", "C2", {v: m("gt", 1)}, tweak=None)
    cell_case(cases, "cell-lt-none", "G2", {v: m("lt", 1)})
    cell_case(cases, "cell-ge-text-vs-num", "D2", {v: m("ge", 1)})
    cell_case(cases, "cell-le", "B3", {v: m("le", 0.1)})
    cell_case(cases, "cell-approx-pass", "B2", {v: m("approx:0.01", 3.14)})
    cell_case(cases, "cell-approx-fail", "B2", {v: m("approx:0.001", 3.14)})
    cell_case(cases, "cell-approx-text", "D2", {v: m("approx:0.1", 3.14)})
    cell_case(cases, "cell-approx-numeric-text", "F3", {v: m("approx:0.1", 3)})
    cell_case(cases, "cell-approx-empty", "G2", {v: m("approx:0.1", 0)})
    cell_case(cases, "cell-approx-ref-text", "B2", {v: m("approx:0.1", "3.14")})
    cell_case(cases, "cell-approx-bool", "E2", {v: m("approx:0.1", 1)})
    cell_case(cases, "cell-re-plain", "D2", {v: m("re", "World$")})
    cell_case(cases, "cell-re-case", "D2", {v: m("re", "^hello")})
    cell_case(cases, "cell-re-ignorecase", "D2", {v: m("re.IGNORECASE", "^hello")})
    cell_case(cases, "cell-re-i", "D2", {v: m("re.I", "^HELLO world$")})
    cell_case(cases, "cell-re-multiline", "D3", {v: m("re.MULTILINE", "^world$")})
    cell_case(cases, "cell-re-no-multiline", "D3", {v: m("re", "^world$")})
    cell_case(cases, "cell-re-two-flags", "D3", {v: m("re.I.M", "^WORLD$")})
    cell_case(cases, "cell-re-dotall", "D3", {v: m("re.DOTALL", "hello.world")})
    cell_case(cases, "cell-re-numeric", "B2", {v: m("re", "3\\.14")})
    cell_case(cases, "cell-re-int", "C3", {v: m("re", "-7")})
    cell_case(cases, "cell-re-empty", "G2", {v: m("re", ".*")})
    cell_case(cases, "cell-re-lowercase-flag", "D2", {v: m("re.i", "hello")})
    cell_case(cases, "cell-str-list-eq", "A2", {v: m("str_list_eq", ["Total"])})
    cell_case(cases, "cell-str-set-eq", "A2", {v: m("str_set_eq", ["Total"])})
    cell_case(cases, "cell-range-te", "B2", {v: m("range.te", [3, 4])})
    cell_case(cases, "cell-range-et-edge", "C2", {v: m("range.et", [42, 50])}, tweak=None)
    cell_case(cases, "cell-range-tt-edge", "C2", {v: m("range.tt", [42, 50])}, tweak=None)
    cell_case(cases, "cell-unknown-method", "D2", {v: m("contains", "Hello")})
    cell_case(cases, "cell-missing-cell", "Z99", {v: m("eq", None)})
    cell_case(cases, "cell-second-sheet", "B1", {v: m("eq", 7)}, sheet_idx=1)
    cell_case(cases, "cell-sheet-rn", "A1", {v: m("eq", "x")}, sheet_idx="RNSecond")
    cell_case(cases, "cell-sheet-missing", "A1", {v: m("eq", "x")}, sheet_idx="RNNope")
    cell_case(cases, "cell-sheet-index-out", "A1", {v: m("eq", "x")}, sheet_idx=7)
    cell_case(
        cases, "cell-two-props-one-fails", "A2", {v: m("eq", "Total"), "font_bold": m("eq", False)}
    )
    cell_case(cases, "cell-bold-true", "A2", {"font_bold": m("eq", True)})
    cell_case(cases, "cell-bold-false-default", "D2", {"font_bold": m("eq", False)})
    cell_case(cases, "cell-bold-none-default", "D2", {"font_bold": m("eq", None)})
    cell_case(cases, "cell-bold-empty-cell", "G2", {"font_bold": m("eq", None)})
    cell_case(cases, "cell-italic", "A2", {"font_italic": m("eq", True)})
    cell_case(cases, "cell-font-color", "A2", {"font_color": m("eq", "FFFF0000")})
    cell_case(cases, "cell-font-color-default", "D2", {"font_color": m("eq", None)})
    cell_case(cases, "cell-font-name", "A2", {"font_name": m("eq", "Arial")})
    cell_case(cases, "cell-font-size", "A2", {"font_size": m("eq", 14)})
    cell_case(cases, "cell-font-underline-none", "A2", {"font_underline": m("eq", None)})
    cell_case(cases, "cell-bgcolor", "A2", {"bgcolor": m("eq", "FFFFFF00")})
    cell_case(cases, "cell-bgcolor-default", "D2", {"bgcolor": m("eq", "00000000")})
    cell_case(cases, "cell-fgcolor", "A2", {"fgcolor": m("eq", "FFFFFF00")})
    cell_case(cases, "cell-fill-type", "A2", {"fill_type": m("eq", "patternFill")})
    cell_case(cases, "cell-number-format", "B2", {"number_format": m("eq", "0.00")})
    cell_case(cases, "cell-number-format-text", "D2", {"number_format": m("eq", None)})
    cell_case(cases, "cell-hyperlink-text", "D2", {"hyperlink": m("eq", "https://example.com/x")})
    cell_case(cases, "cell-hyperlink-none", "A2", {"hyperlink": m("eq", "")})
    cell_case(cases, "cell-merge-anchor", "A5", {"merge": m("eq", False)})
    cell_case(cases, "cell-merge-inner", "B6", {"merge": m("eq", True)})
    cell_case(cases, "cell-merge-plain", "C5", {"merge": m("eq", False)})
    cell_case(cases, "cell-unknown-style", "A2", {"font_shadow": m("eq", None)})
    cell_case(cases, "cell-font-color-re", "A2", {"font_color": m("re", "FF0000$")})
    cell_case(cases, "cell-no-props", "A2", {})
    folder = cases.folder("cell-sheetid-swapped")
    book(folder / "result.xlsx", {"Sheet1": [["first"]], "Second": [["second"]]})
    swap_sheet_ids(folder / "result.xlsx")
    rule = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "A1",
        "props": {v: m("eq", "first")},
    }
    cases.add("cell-sheetid-swapped", "compare_table", "result.xlsx", None, {"rules": [rule]})


def csv_case(
    cases: CaseSet, cid: str, result: str | bytes | None, expected: list | str | bytes, **opts: Any
) -> None:
    folder = cases.folder(cid)
    if result is not None:
        text(folder / "result.csv", result)
    names = []
    for i, content in enumerate(expected if isinstance(expected, list) else [expected]):
        name = f"expected{i}.csv"
        if content is not None:
            text(folder / name, content)
        names.append(name)
    gold = names if isinstance(expected, list) else names[0]
    cases.add(cid, "compare_csv", "result.csv", gold, opts)


def csv_cases(cases: CaseSet) -> None:
    csv = "a,b\n1,2\n3,4\n"
    csv_case(cases, "csv-equal", csv, csv)
    csv_case(cases, "csv-differs", csv, csv.replace("4", "5"))
    csv_case(cases, "csv-crlf", csv.replace("\n", "\r\n"), csv)
    csv_case(cases, "csv-no-final-newline", csv.rstrip("\n"), csv)
    csv_case(cases, "csv-extra-final-blank", csv + "\n", csv)
    csv_case(cases, "csv-trailing-space-strict", csv.replace("\n", " \n"), csv)
    csv_case(cases, "csv-trailing-space-loose", csv.replace("\n", " \n"), csv, strict=False)
    csv_case(cases, "csv-inner-space-loose", csv.replace(",2", ", 2"), csv, strict=False)
    csv_case(cases, "csv-blank-line-loose", csv + "\n", csv, strict=False)
    csv_case(cases, "csv-inner-blank-loose", csv.replace("1,2\n", "1,2\n\n"), csv, strict=False)
    csv_case(cases, "csv-case", csv.upper(), csv.replace("a,b", "A,B"))
    csv_case(cases, "csv-ignore-case", "A,B\n1,2\n3,4\n", csv, ignore_case=True)
    csv_case(
        cases, "csv-ignore-case-and-loose", "A,B \n1,2\n3,4\n", csv, ignore_case=True, strict=False
    )
    csv_case(cases, "csv-bom", "\ufeff" + csv, csv)
    csv_case(cases, "csv-latin1", "caf\xe9\n".encode("latin-1"), "café\n")
    csv_case(cases, "csv-quoted", 'a,b\n"1",2\n3,4\n', csv)
    csv_case(cases, "csv-list-second", csv, ["x\n", csv])
    csv_case(cases, "csv-list-none", csv, ["x\n", "y\n"])
    csv_case(cases, "csv-list-missing-first", csv, [None, csv])
    csv_case(cases, "csv-expected-missing", csv, [None])
    csv_case(cases, "csv-result-missing", None, csv)
    csv_case(cases, "csv-empty-both", "", "")
    csv_case(cases, "csv-empty-vs-newline", "", "\n")
    csv_case(cases, "csv-order", "a,b\n3,4\n1,2\n", csv)
    csv_case(cases, "csv-tab-loose", csv.replace("\n", "\t\n"), csv, strict=False)
