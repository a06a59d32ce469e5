"""Cases for compare_table's value rules: sheet_data, sheet_name, sheet_print, sheet_fuzzy."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tests.osworld_cases.sheet_gen_common import CaseSet, Rows, Tweak, book, rewrite_zip, text

BASE: Rows = [["Name", "Qty", "Price"], ["apple", 3, 1.5], ["pear", 5, 2.25]]


def with_rows(rows: Rows, **changes: Any) -> Rows:
    """A copy of `rows` with cells replaced: changes like r1c2=value (0-based row, col)."""
    copy = [list(r) for r in rows]
    for key, value in changes.items():
        r, c = key[1:].split("c")
        copy[int(r)][int(c)] = value
    return copy


def pair(
    cases: CaseSet,
    cid: str,
    result: Rows | dict,
    expected: Rows | dict | None,
    rules: list[dict],
    rtweak: Tweak | None = None,
    etweak: Tweak | None = None,
) -> None:
    folder = cases.folder(cid)
    book(folder / "result.xlsx", result, rtweak)
    if expected is not None:
        book(folder / "expected.xlsx", expected, etweak)
    cases.add(
        cid,
        "compare_table",
        "result.xlsx",
        "expected.xlsx" if expected is not None else None,
        {"rules": rules},
    )


def data_rule(**extra: Any) -> list[dict]:
    return [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", **extra}]


def sheet_data_cases(cases: CaseSet) -> None:
    d = data_rule()
    pair(cases, "data-identical", BASE, BASE, d)
    pair(cases, "data-int-vs-float", BASE, with_rows(BASE, r1c1=3.0, r2c1=5.0), d)
    pair(cases, "data-one-int-as-float", BASE, with_rows(BASE, r1c1=3.0), d)
    pair(cases, "data-float-5th-decimal", BASE, with_rows(BASE, r1c2=1.50001), d)
    pair(cases, "data-float-4th-decimal", BASE, with_rows(BASE, r1c2=1.5001), d)
    pair(cases, "data-precision-2", BASE, with_rows(BASE, r1c2=1.501), data_rule(precision=2))
    pair(cases, "data-precision-2-far", BASE, with_rows(BASE, r1c2=1.51), data_rule(precision=2))
    pair(cases, "data-precision-0", BASE, with_rows(BASE, r1c2=1.7), data_rule(precision=0))
    pair(cases, "data-round-half", [["v"], [0.00005]], [["v"], [0.0001]], d)
    pair(cases, "data-round-half-even", [["v"], [0.00015]], [["v"], [0.0002]], d)
    pair(cases, "data-case-differs", BASE, with_rows(BASE, r1c0="Apple"), d)
    pair(
        cases,
        "data-case-ignore-case",
        BASE,
        with_rows(BASE, r1c0="Apple"),
        data_rule(ignore_case=True),
    )
    pair(cases, "data-trailing-space", BASE, with_rows(BASE, r1c0="apple "), d)
    pair(cases, "data-header-differs", BASE, with_rows(BASE, r0c1="Quantity"), d)
    pair(cases, "data-header-case", BASE, with_rows(BASE, r0c1="qty"), d)
    pair(cases, "data-empty-vs-none", with_rows(BASE, r1c0=None), with_rows(BASE, r1c0=None), d)
    pair(cases, "data-empty-vs-text", with_rows(BASE, r1c0=None), BASE, d)
    pair(cases, "data-none-vs-false", [["f"], [None], [True]], [["f"], [False], [True]], d)
    pair(cases, "data-bool-vs-int", [["f"], [True], [False]], [["f"], [1], [0]], d)
    pair(cases, "data-bool-vs-int-mixed", [["f"], [True], ["x"]], [["f"], [1], ["x"]], d)
    pair(cases, "data-int-vs-float-mixed", [["f"], [1], ["x"]], [["f"], [1.0], ["x"]], d)
    pair(cases, "data-bool-same", [["f"], [True], [False]], [["f"], [True], [False]], d)
    pair(cases, "data-text-number", BASE, with_rows(BASE, r1c1="3"), d)
    pair(cases, "data-na-string", with_rows(BASE, r1c0="N/A"), with_rows(BASE, r1c0=None), d)
    pair(cases, "data-null-string", with_rows(BASE, r1c0="null"), with_rows(BASE, r1c0=None), d)
    pair(cases, "data-na-vs-text", with_rows(BASE, r1c0="N/A"), with_rows(BASE, r1c0="n/a"), d)
    swapped = [[r[1], r[0], r[2]] for r in BASE]
    pair(cases, "data-columns-swapped", BASE, swapped, d)
    pair(cases, "data-rows-swapped", BASE, [BASE[0], BASE[2], BASE[1]], d)
    pair(cases, "data-extra-row", BASE, [*BASE, ["plum", 1, 1.0]], d)
    pair(cases, "data-extra-empty-column", BASE, [[*r, None] for r in BASE], d)
    pair(cases, "data-extra-header-only-col", BASE, [[*BASE[0], "X"], *BASE[1:]], d)
    pair(cases, "data-blank-first-row", [[None, None, None], *BASE], BASE, d)
    pair(cases, "data-duplicate-headers", [["a", "a"], [1, 2]], [["a", "a.1"], [1, 2]], d)
    pair(cases, "data-empty-sheets", [], [], d)
    pair(cases, "data-empty-vs-header", [], [["a"]], d)
    day = dt.datetime(2024, 3, 1)
    pair(cases, "data-dates-equal", [["d"], [day]], [["d"], [day]], d)
    pair(cases, "data-date-vs-text", [["d"], [day]], [["d"], ["2024-03-01"]], d)
    pair(cases, "data-date-vs-datetime", [["d"], [day.date()]], [["d"], [day]], d)

    def formula(wb):
        wb.active["C2"] = "=A2*B2"

    pair(cases, "data-formula-no-cache", BASE, BASE, d, rtweak=formula)

    def merge(wb):
        wb.active.merge_cells("A2:A3")

    pair(cases, "data-merged-vs-plain", BASE, BASE, d, rtweak=merge)
    two = {"Sheet1": BASE, "Other": [["x"], [1]]}
    pair(cases, "data-index-1", two, two, data_rule(sheet_idx0=1, sheet_idx1="EI1"))
    pair(cases, "data-ri1-vs-en-other", two, two, data_rule(sheet_idx0="RI1", sheet_idx1="ENOther"))
    pair(cases, "data-rn-sheet", two, two, data_rule(sheet_idx0="RNSheet1"))
    pair(cases, "data-rn-missing", two, two, data_rule(sheet_idx0="RNNope"))
    pair(cases, "data-index-out-of-range", two, two, data_rule(sheet_idx0=5))
    pair(cases, "data-index-negative", two, two, data_rule(sheet_idx0=-1, sheet_idx1="EI1"))
    pair(cases, "data-index-negative-out", two, two, data_rule(sheet_idx0=-3))
    pair(cases, "data-ri-negative", two, two, data_rule(sheet_idx0="RI-1", sheet_idx1="EI1"))
    pair(cases, "data-en-missing", two, two, data_rule(sheet_idx1="ENNope"))
    pair(cases, "data-ei-out-of-range", two, two, data_rule(sheet_idx1="EI9"))
    pair(cases, "data-cross-sheet", two, two, data_rule(sheet_idx0=0, sheet_idx1="EI1"))
    pair(cases, "data-result-vs-result", two, two, data_rule(sheet_idx0="RI0", sheet_idx1="RI0"))
    pair(cases, "data-bad-index-string", two, two, data_rule(sheet_idx0="XX0"))
    pair(cases, "data-extra-sheet-ok", two, BASE, d)

    def hyperlink(wb):
        wb.active["A2"].hyperlink = "https://example.com"

    pair(cases, "data-hyperlink-ignored", BASE, BASE, d, rtweak=hyperlink)
    pair(cases, "data-percent-value", [["p"], [0.25]], [["p"], ["25%"]], d)
    pair(cases, "data-big-ints", [["n"], [10**12]], [["n"], [10**12 + 0.00001]], d)
    for cid in ("data-result-missing", "data-result-garbage", "data-result-is-csv"):
        folder = cases.folder(cid)
        book(folder / "expected.xlsx", BASE)
        if cid == "data-result-garbage":
            text(folder / "result.xlsx", "not a zip file")
        if cid == "data-result-is-csv":
            text(folder / "result.xlsx", "Name,Qty,Price\napple,3,1.5\n")
        cases.add(cid, "compare_table", "result.xlsx", "expected.xlsx", {"rules": d})
    pair(cases, "data-no-rules", BASE, with_rows(BASE, r1c0="x"), [])


def sheet_name_cases(cases: CaseSet) -> None:
    rule = [{"type": "sheet_name"}]
    a = {"Sheet1": [["x"]], "Data": [["y"]]}
    pair(cases, "name-equal", a, a, rule)
    pair(cases, "name-order", a, {"Data": [["y"]], "Sheet1": [["x"]]}, rule)
    pair(cases, "name-case", a, {"sheet1": [["x"]], "Data": [["y"]]}, rule)
    pair(cases, "name-extra", a, {"Sheet1": [["x"]]}, rule)
    pair(cases, "name-space", a, {"Sheet1 ": [["x"]], "Data": [["y"]]}, rule)
    pair(cases, "name-no-expected", a, None, rule)
    pair(cases, "name-then-data-fail", a, {"Sheet1": [["z"]], "Data": [["y"]]}, rule + data_rule())


def print_case(
    cases: CaseSet, cid: str, r_csv: str | bytes | None, e_csv: str | bytes | None, **rule: Any
) -> None:
    folder = cases.folder(cid)
    sheets = {"Sheet1": BASE, "Sheet2": [["z"]]}
    book(folder / "result.xlsx", sheets)
    book(folder / "expected.xlsx", sheets)
    sheet = "Sheet2" if rule.get("sheet_idx0") in (1, "RNSheet2") else "Sheet1"
    if r_csv is not None:
        text(folder / f"result-{sheet}.csv", r_csv)
    if e_csv is not None:
        text(folder / f"expected-{sheet}.csv", e_csv)
    full = {"type": "sheet_print", "sheet_idx0": 0, "sheet_idx1": "EI0", **rule}
    if sheet == "Sheet2":
        full["sheet_idx1"] = "EI1"
    cases.add(cid, "compare_table", "result.xlsx", "expected.xlsx", {"rules": [full]})


def sheet_print_cases(cases: CaseSet) -> None:
    csv = "Name,Qty,Price\napple,3,1.5\npear,5,2.25\n"
    print_case(cases, "print-equal", csv, csv)
    print_case(cases, "print-trailing-blank-lines", csv + "\n\n", csv)
    print_case(cases, "print-leading-blank-line", "\n" + csv, csv)
    print_case(cases, "print-inner-blank-line", csv.replace("apple", "\napple"), csv)
    print_case(cases, "print-line-spaces", csv.replace("\n", "  \n"), csv)
    print_case(cases, "print-leading-spaces", "  " + csv, csv)
    print_case(cases, "print-inner-space", csv.replace(",3,", ", 3,"), csv)
    print_case(cases, "print-crlf", csv.replace("\n", "\r\n"), csv)
    print_case(cases, "print-case", csv.upper(), csv)
    print_case(cases, "print-ignore-case", csv.upper(), csv, ignore_case=True)
    print_case(cases, "print-order", "Name,Qty,Price\npear,5,2.25\napple,3,1.5\n", csv)
    print_case(cases, "print-bom", "\ufeff" + csv, csv)
    print_case(cases, "print-latin1", "caf\xe9\n".encode("latin-1"), "café\n")
    print_case(cases, "print-result-missing", None, csv)
    print_case(cases, "print-expected-missing", csv, None)
    print_case(cases, "print-sheet-2", "z\n", "z\n", sheet_idx0=1)
    print_case(cases, "print-sheet-rn", "z\n", "Z\n", sheet_idx0="RNSheet2")
    print_case(cases, "print-number-format", "1.50\n", "1.5\n")


def fuzzy_rule(sub: dict, **rule: Any) -> list[dict]:
    return [{"type": "sheet_fuzzy", "sheet_idx0": 0, "sheet_idx1": "EI0", "rules": [sub], **rule}]


def swap_sheet_ids(path) -> None:
    """Give the two sheets each other's sheetId (files and relations unchanged)."""

    def edit(name: str, data: bytes) -> bytes:
        if name != "xl/workbook.xml":
            return data
        out = data.replace(b'sheetId="1"', b'sheetId="X"').replace(b'sheetId="2"', b'sheetId="1"')
        return out.replace(b'sheetId="X"', b'sheetId="2"')

    rewrite_zip(path, edit)


def sheet_fuzzy_cases(cases: CaseSet) -> None:
    rows = [["Road", "Addr"], ["12 Main Rd", 5], ["+ 33 Elm St ", 2.5]]
    exact = {"range": ["A1:B3"], "type": "exact_match"}
    pair(cases, "fuzzy-exact-equal", rows, rows, fuzzy_rule(exact))
    pair(cases, "fuzzy-exact-int-vs-float", rows, with_rows(rows, r1c1=5.0), fuzzy_rule(exact))
    pair(cases, "fuzzy-exact-num-vs-text", rows, with_rows(rows, r1c1="5"), fuzzy_rule(exact))
    pair(cases, "fuzzy-exact-text-5.0", rows, with_rows(rows, r1c1="5.0"), fuzzy_rule(exact))
    pair(
        cases,
        "fuzzy-empty-vs-text-none",
        with_rows(rows, r1c0=None),
        with_rows(rows, r1c0="None"),
        fuzzy_rule(exact),
    )
    pair(
        cases,
        "fuzzy-bool-vs-empty",
        with_rows(rows, r1c0=True),
        with_rows(rows, r1c0=None),
        fuzzy_rule(exact),
    )
    norm = {**exact, "range": ["A2:A2"], "normalization": [["Rd", "Road"]]}
    pair(cases, "fuzzy-normalization", rows, with_rows(rows, r1c0="12 Main Road"), fuzzy_rule(norm))
    lead = {**exact, "range": ["A3"], "trim_leadings": "+ "}
    pair(cases, "fuzzy-trim-leadings", rows, with_rows(rows, r2c0="33 Elm St "), fuzzy_rule(lead))
    trail = {**exact, "range": ["A3"], "trim_trailings": " t"}
    pair(cases, "fuzzy-trim-trailings", rows, with_rows(rows, r2c0="+ 33 Elm S"), fuzzy_rule(trail))
    chars = {**exact, "range": ["A2:A3"], "ignore_chars": " +"}
    pair(
        cases,
        "fuzzy-ignore-chars",
        rows,
        with_rows(rows, r1c0="12MainRd", r2c0="33ElmSt"),
        fuzzy_rule(chars),
    )
    order = {**exact, "range": ["A2"], "normalization": [["  ", " "]], "ignore_chars": " "}
    pair(
        cases,
        "fuzzy-normalize-then-strip",
        with_rows(rows, r1c0="12  Main Rd"),
        rows,
        fuzzy_rule(order),
    )
    order2 = {**exact, "range": ["A3"], "normalization": [["+", "plus"]], "trim_leadings": "+ "}
    pair(
        cases,
        "fuzzy-normalize-before-trim",
        rows,
        with_rows(rows, r2c0="33 Elm St "),
        fuzzy_rule(order2),
    )
    case = {**exact, "range": ["A1"], "ignore_case": True}
    pair(cases, "fuzzy-ignore-case", rows, with_rows(rows, r0c0="ROAD"), fuzzy_rule(case))
    pair(cases, "fuzzy-case-differs", rows, with_rows(rows, r0c0="ROAD"), fuzzy_rule(exact))
    inc = {"range": ["A2"], "type": "includes"}
    pair(cases, "fuzzy-includes", rows, with_rows(rows, r1c0="Main"), fuzzy_rule(inc))
    pair(
        cases, "fuzzy-includes-reverse", rows, with_rows(rows, r1c0="12 Main Rd N"), fuzzy_rule(inc)
    )
    incb = {"range": ["A2"], "type": "included_by"}
    pair(cases, "fuzzy-included-by", rows, with_rows(rows, r1c0="At 12 Main Rd"), fuzzy_rule(incb))
    pair(cases, "fuzzy-included-by-no", rows, with_rows(rows, r1c0="Main"), fuzzy_rule(incb))
    fz = {"range": ["A2"], "type": "fuzzy_match"}
    pair(
        cases, "fuzzy-ratio-default-pass", rows, with_rows(rows, r1c0="12 Main Rd."), fuzzy_rule(fz)
    )
    pair(
        cases,
        "fuzzy-ratio-default-fail",
        rows,
        with_rows(rows, r1c0="12 Maple Ave"),
        fuzzy_rule(fz),
    )
    pair(
        cases,
        "fuzzy-ratio-threshold-95",
        rows,
        with_rows(rows, r1c0="12 Main Rd."),
        fuzzy_rule({**fz, "threshold": 97}),
    )
    pair(
        cases,
        "fuzzy-ratio-threshold-50",
        rows,
        with_rows(rows, r1c0="12 Maple Rd"),
        fuzzy_rule({**fz, "threshold": 50}),
    )
    multi = {"range": ["A1", "B2:B3"], "type": "exact_match"}
    pair(cases, "fuzzy-multi-range", rows, with_rows(rows, r2c1=2.6), fuzzy_rule(multi))
    pair(
        cases,
        "fuzzy-two-subrules",
        rows,
        with_rows(rows, r1c0="12 MAIN RD"),
        [
            {
                "type": "sheet_fuzzy",
                "sheet_idx0": 0,
                "sheet_idx1": "EI0",
                "rules": [{**exact, "range": ["A1"]}, {**case, "range": ["A2"]}],
            }
        ],
    )
    pair(cases, "fuzzy-no-subrules", rows, with_rows(rows, r1c0="x"), fuzzy_rule(exact, rules=[]))
    two = {"Sheet1": rows, "Sheet2": [["Road", "Addr"], ["other", 1]]}
    pair(
        cases,
        "fuzzy-by-name",
        two,
        two,
        fuzzy_rule(exact, sheet_idx0="RNSheet2", sheet_idx1="ENSheet2"),
    )
    for cid, swap_result in (("fuzzy-sheetid-swapped", True), ("fuzzy-sheetid-both", False)):
        pair(cases, cid, two, two, fuzzy_rule(exact))
        folder = cases.root / cid
        swap_sheet_ids(folder / "result.xlsx")
        if not swap_result:
            swap_sheet_ids(folder / "expected.xlsx")

    def rich(wb):
        from openpyxl.cell.rich_text import CellRichText, TextBlock
        from openpyxl.cell.text import InlineFont

        wb.active["A2"] = CellRichText(["12 ", TextBlock(InlineFont(b=True), "Main"), " Rd"])

    pair(cases, "fuzzy-rich-text", rows, rows, fuzzy_rule(exact), rtweak=rich)

    def formula(wb):
        wb.active["B2"] = "=2+3"

    pair(cases, "fuzzy-formula-cell", rows, rows, fuzzy_rule(exact), rtweak=formula)
