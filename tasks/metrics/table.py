"""Spreadsheet metrics: OSWorld's `compare_table` with its rule vocabulary, and `compare_csv`.

`compare_table` opens the result workbook (and the expected one when given) and applies its `rules`
in order; the first failing rule makes the score 0.0, all passing 1.0. The rules read the files as
OSWorld's do (see tasks/metrics/sheets.py): `sheet_data` compares pandas frames, `check_cell` reads
a cell's stored XML value, `style` applies conditional formats. Failures (a result that is missing
or cannot be opened, a broken rule) raise, and the evaluator records them as that metric's error
with the value 0.0, the score OSWorld's run gets when its function raises.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from openpyxl.utils import get_column_letter
from openpyxl.worksheet.cell_range import MultiCellRange
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.pivots import load_pivots
from tasks.metrics.registry import metric
from tasks.metrics.sheet_objects import (
    freeze_key,
    load_charts,
    load_dimensions,
    load_filter,
    load_sparklines,
    validations_match,
)
from tasks.metrics.sheet_styles import load_styles
from tasks.metrics.sheets import (
    Books,
    MissingSheet,
    Workbooks,
    comparison,
    read_cell_value,
    read_text_lines,
    style_value,
)


def rule_sheet_name(books: Books, rule: dict) -> bool:
    expected = books.expected.names if books.expected is not None else None
    return books.result.names == expected


def rule_sheet_data(books: Books, rule: dict) -> bool:
    """The pandas frames of both sheets are equal after rounding (dtypes included).

    OSWorld ignores `ignore_case` here, so it is ignored.
    """
    precision = rule.get("precision", 4)
    left, right = books.frame(rule["sheet_idx0"]), books.frame(rule["sheet_idx1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # round() says it skips date columns
        return left.round(precision).equals(right.round(precision))


def printed_lines(books: Books, ref: Any) -> list[str]:
    """The sheet's CSV export beside the workbook, stripped, trailing blank lines dropped."""
    path, name = books.path_and_name(ref)
    export = f"{os.path.splitext(path)[0]}-{name}.csv"
    try:
        lines = read_text_lines(export)
    except OSError:
        raise MissingSheet(f"the CSV export {os.path.basename(export)} does not exist") from None
    stripped = [line.strip() for line in lines]
    while stripped and not stripped[-1]:
        stripped.pop()
    return stripped


def rule_sheet_print(books: Books, rule: dict) -> bool:
    left = printed_lines(books, rule["sheet_idx0"])
    right = printed_lines(books, rule["sheet_idx1"])
    if rule.get("ignore_case", False):
        left = [line.lower() for line in left]
        right = [line.lower() for line in right]
    return left == right


def fuzzy_text(value: Any, sub: dict) -> str:
    """A cell's stored value as text (`None` for an empty cell), normalised in OSWorld's order."""
    text = str(value)
    for old, new in sub.get("normalization", []):
        text = text.replace(old, new)
    if "trim_leadings" in sub:
        text = text.lstrip(sub["trim_leadings"])
    if "trim_trailings" in sub:
        text = text.rstrip(sub["trim_trailings"])
    if "ignore_chars" in sub:
        text = "".join(ch for ch in text if ch not in set(sub["ignore_chars"]))
    return text.lower() if sub.get("ignore_case", False) else text


def fuzzy_match(got: str, want: str, sub: dict) -> bool:
    kind = sub["type"]
    if kind == "includes":
        return want in got
    if kind == "included_by":
        return got in want
    if kind == "fuzzy_match":
        return fuzz.ratio(got, want) >= sub.get("threshold", 85.0)
    if kind == "exact_match":
        return got == want
    raise StateActError(f"unknown sheet_fuzzy match type {kind!r}")


def rule_sheet_fuzzy(books: Books, rule: dict) -> bool:
    """Cells of the listed ranges match between the sheets by each sub-rule's match type."""
    result = books.path_and_name(rule["sheet_idx0"])
    expected = books.path_and_name(rule["sheet_idx1"])
    for sub in rule["rules"]:
        for cell_range in MultiCellRange(sub["range"]):
            for row, col in cell_range.cells:
                coordinate = f"{get_column_letter(col)}{row}"
                got = fuzzy_text(read_cell_value(*result, coordinate), sub)
                want = fuzzy_text(read_cell_value(*expected, coordinate), sub)
                if not fuzzy_match(got, want, sub):
                    return False
    return True


def rule_sparkline(books: Books, rule: dict) -> bool:
    return load_sparklines(*books.path_and_name(rule["sheet_idx0"])) == load_sparklines(
        *books.path_and_name(rule["sheet_idx1"])
    )


def rule_chart(books: Books, rule: dict) -> bool:
    """Charts keyed by their series references agree in the listed `chart_props`."""
    left = load_charts(books.sheet_or_none(rule["sheet_idx0"]), rule)
    return left == load_charts(books.sheet_or_none(rule["sheet_idx1"]), rule)


def sheet_styles(books: Books, ref: Any, props: list[str]) -> dict:
    sheet = books.sheet_or_none(ref)
    if sheet is None:
        return {}
    path, name = books.path_and_name(ref)
    return load_styles(sheet, path, name, props)


def rule_style(books: Books, rule: dict) -> bool:
    """Every cell's listed style properties agree, conditional formats applied."""
    props = rule.get("props", [])
    return sheet_styles(books, rule["sheet_idx0"], props) == sheet_styles(
        books, rule["sheet_idx1"], props
    )


def rule_freeze(books: Books, rule: dict) -> bool:
    left = freeze_key(books.sheet(rule["sheet_idx0"]))
    return left == freeze_key(books.sheet(rule["sheet_idx1"]))


def rule_zoom(books: Books, rule: dict) -> bool:
    zoom = books.sheet(rule["sheet_idx"]).sheet_view.zoomScale or 100.0
    return comparison(zoom, rule)


def rule_data_validation(books: Books, rule: dict) -> bool:
    return validations_match(books.sheet(rule["sheet_idx"]), rule["dv_props"])


def dimensions_rule(kind: str) -> Callable[[Books, dict], bool]:
    def check(books: Books, rule: dict) -> bool:
        props = rule.get("props", [])
        left = load_dimensions(books.sheet_or_none(rule["sheet_idx0"]), kind, props)
        return left == load_dimensions(books.sheet_or_none(rule["sheet_idx1"]), kind, props)

    check.__doc__ = f"The recorded {kind} dimensions agree in the listed `props`."
    return check


def rule_filter(books: Books, rule: dict) -> bool:
    left = load_filter(books.sheet_or_none(rule["sheet_idx0"]))
    return left == load_filter(books.sheet_or_none(rule["sheet_idx1"]))


def rule_pivot_table(books: Books, rule: dict) -> bool:
    left = load_pivots(books.sheet_or_none(rule["sheet_idx0"]), rule)
    return left == load_pivots(books.sheet_or_none(rule["sheet_idx1"]), rule)


# StateAct's own check_cell properties, for tasks whose cells must stay formulas: the formula text,
# and the number format of a formula cell (OSWorld reads `number_format` only on plain numbers).
# OSWorld has neither, so no OSWorld task names them and its verdicts are unchanged.
FORMULA_PROPS = {
    "formula": lambda cell: cell.value,
    "formula_number_format": lambda cell: cell.number_format,
}


def rule_check_cell(books: Books, rule: dict) -> bool:
    """Each listed property of one cell satisfies its {method, ref}; any failure fails the rule."""
    try:
        sheet = books.sheet(rule["sheet_idx"])
        coordinate = rule["coordinate"]
        cell = sheet[coordinate]
        for prop, check in rule["props"].items():
            try:
                if prop == "value":
                    value = read_cell_value(*books.path_and_name(rule["sheet_idx"]), coordinate)
                elif prop in FORMULA_PROPS:
                    value = FORMULA_PROPS[prop](cell) if cell.data_type == "f" else None
                else:
                    value = style_value(prop, cell)
            except Exception:  # noqa: BLE001 -- OSWorld reads an unreadable property as None
                value = None
            if not comparison(value, check):
                return False
        return True
    except Exception:  # noqa: BLE001 -- OSWorld scores any failure of this rule as 0
        return False


RULES: dict[str, Callable[[Books, dict], bool]] = {
    "sheet_name": rule_sheet_name,
    "sheet_data": rule_sheet_data,
    "sheet_print": rule_sheet_print,
    "sheet_fuzzy": rule_sheet_fuzzy,
    "sparkline": rule_sparkline,
    "chart": rule_chart,
    "style": rule_style,
    "freeze": rule_freeze,
    "zoom": rule_zoom,
    "data_validation": rule_data_validation,
    "row_props": dimensions_rule("row"),
    "col_props": dimensions_rule("column"),
    "filter": rule_filter,
    "pivot_table": rule_pivot_table,
    "check_cell": rule_check_cell,
}


@metric("compare_table")
def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    """1.0 when every rule in `options["rules"]` passes, else 0.0."""
    rules = options.get("rules")
    if not isinstance(rules, list) or not all(isinstance(r, dict) and "type" in r for r in rules):
        raise StateActError("compare_table needs options.rules, a list of rules with a 'type'")
    # OSWorld returns 0.0 for these; raising gives the same score plus the reason in the record.
    if result is None or not os.path.exists(result):
        raise StateActError("the result spreadsheet does not exist")
    try:
        result_books = Workbooks.open(result)
    except Exception as exc:  # noqa: BLE001 -- any unreadable result scores 0, as in OSWorld
        raise StateActError(
            f"the result spreadsheet {os.path.basename(result)} cannot be read ({exc})"
        ) from None
    expected_books = Workbooks.open(expected) if expected is not None else None
    books = Books(result_books, expected_books)
    for rule in rules:
        check = RULES.get(rule["type"])
        if check is None:
            raise StateActError(f"compare_table rule type {rule['type']!r} is not supported")
        try:
            passed = check(books, rule)
        except MissingSheet as exc:
            # OSWorld returns 0.0 here; the same score, with the reason kept.
            raise StateActError(str(exc)) from None
        if not passed:
            return 0.0
    return 1.0


def csv_variants(lines: list[str], options: dict) -> list[str]:
    if not options.get("strict", True):
        lines = [line.strip() for line in lines]
    if options.get("ignore_case", False):
        lines = [line.lower() for line in lines]
    return lines


@metric("compare_csv")
def compare_csv(result: str | None, expected: str | list[str], **options: Any) -> float:
    """1.0 when the result CSV's lines equal those of the expected file (or of one of a list)."""
    if result is None:
        return 0.0
    try:
        got = csv_variants(read_text_lines(result), options)
    except OSError:
        return 0.0
    for gold in [expected] if isinstance(expected, str) else expected:
        try:
            want = csv_variants(read_text_lines(gold), options)
        except OSError:
            continue
        if got == want:
            return 1.0
    return 0.0
