"""Cases that use public OSWorld tasks' compare_table rule sets verbatim on small workbooks of the
kind the tasks ask for (solved, and with the usual slips)."""

from __future__ import annotations

from typing import Any

from openpyxl.styles import Font, PatternFill

from tests.osworld_cases.sheet_gen_common import CaseSet, Tweak, book
from tests.osworld_cases.sheet_gen_data import with_rows
from tests.osworld_cases.sheet_gen_pivots import to_shared_strings

MERGE_RULES = [  # task 1d17d234
    {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": c, "props": p}
    for c, p in [
        ("A1", {"value": {"method": "eq", "ref": "Investment Summary"}}),
        ("B1", {"merge": {"method": "eq", "ref": True}}),
        ("C1", {"merge": {"method": "eq", "ref": True}}),
        ("D1", {"merge": {"method": "eq", "ref": False}}),
        ("A2", {"value": {"method": "eq", "ref": "High Interest Rate"}}),
        ("B2", {"merge": {"method": "eq", "ref": True}}),
        ("C2", {"value": {"method": "eq", "ref": "Low Interest Rate"}}),
        ("D2", {"merge": {"method": "eq", "ref": True}}),
        ("E2", {"merge": {"method": "eq", "ref": False}}),
    ]
]
HEADER_RULE = {  # task 30e3e107 (its check_cell rule)
    "type": "check_cell",
    "sheet_idx": "RNSheet2",
    "coordinate": "A1",
    "props": {
        "bgcolor": {"method": "eq", "ref": "FF0000FF"},
        "font_color": {"method": "eq", "ref": "FFFFFFFF"},
        "font_bold": {"method": "eq", "ref": True},
        "value": {"method": "eq", "ref": "Demographic Profile"},
    },
}
AUTHORS_RULE = {  # task b5062e3e
    "type": "sheet_fuzzy",
    "sheet_idx0": "RNSheet1",
    "sheet_idx1": "ENSheet1",
    "rules": [
        {"range": ["A1:C1"], "type": "includes", "ignore_case": True},
        {"range": ["A2:B5"], "type": "exact_match", "trim_leadings": " ", "trim_trailings": " "},
        {
            "range": ["C2:C5"],
            "type": "exact_match",
            "trim_leadings": " ",
            "trim_trailings": " ",
            "ignore_case": True,
        },
    ],
}
RESTAURANT_RULE = {  # task d1acdb87
    "type": "sheet_fuzzy",
    "sheet_idx0": "RNSheet1",
    "sheet_idx1": "ENSheet1",
    "rules": [
        {"range": ["A1:A6", "D1:D6"], "type": "exact_match"},
        {
            "range": ["B1:B6"],
            "type": "fuzzy_match",
            "threshold": 85,
            "normalization": [["Rd", "Road"], ["St", "Street"]],
            "ignore_case": True,
        },
        {"range": ["C1:C6"], "type": "includes", "trim_leadings": "+ ", "ignore_chars": " ()-"},
    ],
}
AUTHORS = [
    ["Name", "Mail", "Affiliation"],
    ["Ada Byron", "ada@x.org", "Analytical Society"],
    ["Alan Turing", "alan@y.org", "Bletchley Park"],
    ["Grace Hopper", "grace@z.org", "US Navy"],
    ["Edsger Dijkstra", "ewd@t.nl", "TU Eindhoven"],
]
RESTAURANTS = [
    ["Restaurant", "Address", "Phone", "Hours"],
    ["Tim Ho Wan", "9-11 Fuk Wing St", "+852 2332 2896", "10-21"],
    ["Kam's Roast", "226 Hennessy Rd", "+852 2520 1110", "10-21"],
    ["Yat Lok", "34-38 Stanley St", "+852 2524 3882", "10-21"],
    ["Mak's Noodle", "77 Wellington St", "+852 2854 3810", "11-21"],
    ["Lan Fong Yuen", "2 Gage St", "+852 2544 3895", "7-18"],
]


def merges(*ranges: str) -> Tweak:
    def tweak(wb) -> None:
        ws = wb["Sheet2"]
        for cell_range in ranges:
            ws.merge_cells(cell_range)

    return tweak


def styled_header(fill: str = "FF0000FF", color: str = "FFFFFFFF", bold: bool = True) -> Tweak:
    def tweak(wb) -> None:
        cell = wb["Sheet2"]["A1"]
        cell.fill = PatternFill("solid", fgColor=fill)
        cell.font = Font(color=color, bold=bold)
        wb["Sheet2"].merge_cells("A1:C1")

    return tweak


def task_cases(cases: CaseSet) -> None:
    def one(cid: str, sheets: dict, tweak: Tweak | None, rules: list[dict], shared=False) -> None:
        folder = cases.folder(cid)
        book(folder / "result.xlsx", sheets, tweak)
        if shared:
            to_shared_strings(folder / "result.xlsx")
        cases.add(cid, "compare_table", "result.xlsx", None, {"rules": rules})

    def two(cid: str, result: Any, expected: Any, rules: list[dict], shared=False) -> None:
        folder = cases.folder(cid)
        book(folder / "result.xlsx", {"Sheet1": result})
        book(folder / "expected.xlsx", {"Sheet1": expected})
        if shared:
            to_shared_strings(folder / "result.xlsx")
            to_shared_strings(folder / "expected.xlsx")
        cases.add(cid, "compare_table", "result.xlsx", "expected.xlsx", {"rules": rules})

    summary = [["Investment Summary"], ["High Interest Rate", None, "Low Interest Rate"]]
    sheets = {"Sheet1": [["x"]], "Sheet2": summary}
    for shared in (False, True):
        tag = "-sst" if shared else ""
        one(
            f"task-merge-solved{tag}",
            sheets,
            merges("A1:C1", "A2:B2", "C2:D2"),
            MERGE_RULES,
            shared,
        )
        one(
            f"task-merge-a1-d1{tag}", sheets, merges("A1:D1", "A2:B2", "C2:D2"), MERGE_RULES, shared
        )
        one(f"task-merge-missing{tag}", sheets, merges("A1:C1", "A2:B2"), MERGE_RULES, shared)
        header = {"Sheet1": [["x"]], "Sheet2": [["Demographic Profile"]]}
        one(f"task-header-solved{tag}", header, styled_header(), [HEADER_RULE], shared)
        one(
            f"task-header-rgb-short{tag}",
            header,
            styled_header(fill="000000FF"),
            [HEADER_RULE],
            shared,
        )
        one(f"task-header-not-bold{tag}", header, styled_header(bold=False), [HEADER_RULE], shared)
        two(f"task-authors-solved{tag}", AUTHORS, AUTHORS, [AUTHORS_RULE], shared)
        two(
            f"task-authors-header-longer{tag}",
            with_rows(AUTHORS, r0c1="E-Mail address"),
            with_rows(AUTHORS, r0c1="mail"),
            [AUTHORS_RULE],
            shared,
        )
        two(
            f"task-authors-padded{tag}",
            with_rows(AUTHORS, r1c0=" Ada Byron "),
            AUTHORS,
            [AUTHORS_RULE],
            shared,
        )
        two(
            f"task-authors-case{tag}",
            with_rows(AUTHORS, r1c2="analytical society"),
            AUTHORS,
            [AUTHORS_RULE],
            shared,
        )
        two(
            f"task-authors-order{tag}",
            [AUTHORS[0], AUTHORS[2], AUTHORS[1], *AUTHORS[3:]],
            AUTHORS,
            [AUTHORS_RULE],
            shared,
        )
        two(f"task-restaurants-solved{tag}", RESTAURANTS, RESTAURANTS, [RESTAURANT_RULE], shared)
        two(
            f"task-restaurants-road{tag}",
            with_rows(RESTAURANTS, r2c1="226 Hennessy Road", r1c1="9-11 Fuk Wing Street"),
            RESTAURANTS,
            [RESTAURANT_RULE],
            shared,
        )
        two(
            f"task-restaurants-phone-format{tag}",
            with_rows(RESTAURANTS, r1c2="+852-2332-2896", r2c2="(852) 2520 1110"),
            RESTAURANTS,
            [RESTAURANT_RULE],
            shared,
        )
        two(
            f"task-restaurants-phone-prefix{tag}",
            with_rows(RESTAURANTS, r1c2="2332 2896"),
            RESTAURANTS,
            [RESTAURANT_RULE],
            shared,
        )
        two(
            f"task-restaurants-hours{tag}",
            with_rows(RESTAURANTS, r1c3="10:00-21:00"),
            RESTAURANTS,
            [RESTAURANT_RULE],
            shared,
        )
    approx = [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "E3",
            "props": {"value": {"method": "approx:0.001", "ref": 191.6667}},
        }
    ]  # task 357ef137
    grid = [["a", "b", "c", "d", "e"], [1, 2, 3, 4, 5], [1, 2, 3, 4, 191.66666667]]
    one("task-approx-solved", {"Sheet1": grid}, None, approx)
    one("task-approx-rounded", {"Sheet1": with_rows(grid, r2c4=191.67)}, None, approx)
    one("task-approx-text", {"Sheet1": with_rows(grid, r2c4="191.6667")}, None, approx)
    one("task-approx-formula", {"Sheet1": with_rows(grid, r2c4="=575/3")}, None, approx)
