"""Spreadsheet metrics: OSWorld's `compare_table` with its rule vocabulary, and `compare_csv`.

`compare_table` opens the result workbook (and the expected one when given) and applies its `rules`
in order: any failing rule scores 0.0, all passing 1.0. Values are read as computed values
(openpyxl `data_only=True`, which is also what pandas reads), so a formula cell compares by its
cached result as in OSWorld. Sheet references: an integer index (result for `sheet_idx0`/
`sheet_idx`, expected for `sheet_idx1`), `RI<n>`/`RN<name>` for the result, `EI<n>`/`EN<name>` for
the expected workbook. Broken input (missing file, corrupt workbook, bad reference) raises
StateActError, which the evaluator records as that metric's error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
from openpyxl.worksheet.dimensions import ColumnDimension, RowDimension
from openpyxl.worksheet.worksheet import Worksheet
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.general import compare_with_method
from tasks.metrics.pivots import rule_pivot_table
from tasks.metrics.registry import metric
from tasks.metrics.sheets import Book, Books, cell_coordinates, cell_prop


def normalize_cell(value: Any, precision: int, ignore_case: bool) -> Any:
    """A DataFrame cell as a comparable value: NaN → None, numbers rounded, text folded if asked."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return round(float(value), precision)
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, str) and ignore_case:
        return value.lower()
    return value


def frame_rows(frame: pd.DataFrame, precision: int, ignore_case: bool) -> list[list[Any]]:
    header = [normalize_cell(c, precision, ignore_case) for c in frame.columns]
    body = [
        [normalize_cell(v, precision, ignore_case) for v in row]
        for row in frame.itertuples(index=False, name=None)
    ]
    return [header, *body]


def rule_sheet_data(books: Books, rule: dict) -> bool:
    """Both sheets hold the same table (pandas, header row included) after rounding."""
    r_book, r_name = books.sheet_name(rule.get("sheet_idx0", 0), "R")
    e_book, e_name = books.sheet_name(rule.get("sheet_idx1", "EI0"), "E")
    precision, ignore_case = rule.get("precision", 4), rule.get("ignore_case", False)
    left = frame_rows(r_book.frame(r_name), precision, ignore_case)
    right = frame_rows(e_book.frame(e_name), precision, ignore_case)
    return left == right


def printed_csv(book: Book, sheet: str) -> Path:
    """The `<book>-<sheet>.csv` export that LibreOffice writes beside the workbook."""
    return book.path.with_name(f"{book.path.stem}-{sheet}.csv")


def rule_sheet_print(books: Books, rule: dict) -> bool:
    """The CSV exports of both sheets are line-for-line equal (what the sheet prints as)."""
    lines = []
    for ref, side in ((rule.get("sheet_idx0", 0), "R"), (rule.get("sheet_idx1", "EI0"), "E")):
        csv_path = printed_csv(*books.sheet_name(ref, side))
        if not csv_path.is_file():
            raise StateActError(f"the CSV export {csv_path.name} of the sheet does not exist")
        text = csv_path.read_text(encoding="utf-8", errors="replace")
        lines.append(
            [ln.rstrip() for ln in (text.lower() if rule.get("ignore_case") else text).splitlines()]
        )
    return lines[0] == lines[1]


def rule_sheet_name(books: Books, rule: dict) -> bool:
    if books.expected is None:
        raise StateActError("rule sheet_name needs an expected workbook")
    return books.result.values.sheetnames == books.expected.values.sheetnames


def rule_check_cell(books: Books, rule: dict) -> bool:
    """Each listed property of one cell satisfies its {method, ref}."""
    _, values, formulas = books.sheets(rule.get("sheet_idx", 0), "R")
    coordinate = rule["coordinate"]
    for prop, check in rule.get("props", {}).items():
        value = cell_prop(values, formulas, coordinate, prop)
        if not compare_with_method(value, check.get("method", "eq"), check.get("ref")):
            return False
    return True


def fuzzy_text(value: Any, options: dict) -> str:
    """A cell value as text, normalised by the sheet_fuzzy options."""
    if value is None:
        text = ""
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    text = text.lstrip(options["trim_leadings"]) if options.get("trim_leadings") else text
    text = text.rstrip(options["trim_trailings"]) if options.get("trim_trailings") else text
    for char in options.get("ignore_chars", ""):
        text = text.replace(char, "")
    for old, new in options.get("normalization", []):
        text = text.replace(old, new)
    return text.lower() if options.get("ignore_case") else text


def fuzzy_cells_match(got: str, want: str, options: dict) -> bool:
    kind = options.get("type", "exact_match")
    if kind == "exact_match":
        return got == want
    if kind == "includes":
        return want in got
    if kind == "included_by":
        return got in want
    if kind == "fuzzy_match":
        return fuzz.ratio(got, want) >= options.get("threshold", 85)
    raise StateActError(f"unknown sheet_fuzzy match type {kind!r}")


def rule_sheet_fuzzy(books: Books, rule: dict) -> bool:
    """Cells in the listed ranges match between the sheets by each sub-rule's match type."""
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    for sub in rule.get("rules", []):
        for cell_range in sub.get("range", []):
            for coordinate in cell_coordinates(cell_range):
                got = fuzzy_text(result[coordinate].value, sub)
                want = fuzzy_text(expected[coordinate].value, sub)
                if not fuzzy_cells_match(got, want, sub):
                    return False
    return True


def used_coordinates(*sheets: Worksheet) -> list[str]:
    rows = max(s.max_row for s in sheets)
    cols = max(s.max_column for s in sheets)
    return cell_coordinates(f"A1:{openpyxl.utils.get_column_letter(cols)}{rows}")


def rule_style(books: Books, rule: dict) -> bool:
    """The listed style properties are equal in every used cell of both sheets."""
    _, r_values, r_formulas = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, e_values, e_formulas = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    for coordinate in used_coordinates(r_values, e_values):
        for prop in rule.get("props", []):
            got = cell_prop(r_values, r_formulas, coordinate, prop)
            if got != cell_prop(e_values, e_formulas, coordinate, prop):
                return False
    return True


def rule_freeze(books: Books, rule: dict) -> bool:
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    return result.freeze_panes == expected.freeze_panes


def rule_zoom(books: Books, rule: dict) -> bool:
    _, sheet, _ = books.sheets(rule.get("sheet_idx", 0), "R")
    zoom = sheet.sheet_view.zoomScale or 100
    return compare_with_method(zoom, rule.get("method", "eq"), rule.get("ref"))


def dimension_props(keys: list, dims: Any, props: list[str], default: Any) -> list:
    # Read through .get so that looking at a row or column does not create its dimension; a row or
    # column a writer left out has the defaults (LibreOffice writes hidden="false" where openpyxl
    # writes nothing, and both mean the same).
    return [[getattr(dims.get(k) or default, p, None) for p in props] for k in keys]


def rule_row_props(books: Books, rule: dict) -> bool:
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    rows = list(range(1, max(result.max_row, expected.max_row) + 1))
    props = rule.get("props", [])
    return dimension_props(
        rows, result.row_dimensions, props, RowDimension(result)
    ) == dimension_props(rows, expected.row_dimensions, props, RowDimension(expected))


def rule_col_props(books: Books, rule: dict) -> bool:
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    count = max(result.max_column, expected.max_column)
    cols = [openpyxl.utils.get_column_letter(i) for i in range(1, count + 1)]
    props = rule.get("props", [])
    return dimension_props(
        cols, result.column_dimensions, props, ColumnDimension(result)
    ) == dimension_props(cols, expected.column_dimensions, props, ColumnDimension(expected))


def validation_props(validation: Any) -> dict[str, Any]:
    return {
        "ranges": str(validation.sqref),
        "type": validation.type,
        "formula1": validation.formula1,
        "formula2": validation.formula2,
        "operator": validation.operator,
        "allow_blank": validation.allow_blank,
        "showDropDown": validation.showDropDown,
        "showErrorMessage": validation.showErrorMessage,
        "showInputMessage": validation.showInputMessage,
        "error": validation.error,
        "prompt": validation.prompt,
    }


def rule_data_validation(books: Books, rule: dict) -> bool:
    """Each `dv_props` entry is satisfied by some data validation of the sheet."""
    _, sheet, _ = books.sheets(rule.get("sheet_idx", 0), "R")
    found = [validation_props(v) for v in sheet.data_validations.dataValidation]
    for wanted in rule.get("dv_props", []):
        if not any(
            all(
                compare_with_method(props.get(k), c.get("method", "eq"), c.get("ref"))
                for k, c in wanted.items()
            )
            for props in found
        ):
            return False
    return True


def chart_props(sheet: Worksheet, props: list[str]) -> list[dict]:
    charts = []
    for chart in getattr(sheet, "_charts", []):
        title = None
        if (
            chart.title is not None
            and chart.title.tx is not None
            and chart.title.tx.rich is not None
        ):
            title = "".join(r.t for p in chart.title.tx.rich.p for r in (p.r or []))
        readers = {
            "type": chart.tagname,
            "title": title,
            "direction": getattr(chart, "barDir", None),
            "legend": chart.legend.position if chart.legend else None,
            "xtitle": None,
            "ytitle": None,
        }
        charts.append({p: readers.get(p) for p in props})
    return charts


def rule_chart(books: Books, rule: dict) -> bool:
    """The sheets' charts agree in the listed properties (type, title, direction, legend)."""
    _, result, _ = books.sheets(rule.get("sheet_idx0", 0), "R")
    _, expected, _ = books.sheets(rule.get("sheet_idx1", "EI0"), "E")
    props = rule.get("chart_props", ["type"])
    return chart_props(result, props) == chart_props(expected, props)


RULES = {
    "sheet_data": rule_sheet_data,
    "sheet_print": rule_sheet_print,
    "sheet_name": rule_sheet_name,
    "check_cell": rule_check_cell,
    "sheet_fuzzy": rule_sheet_fuzzy,
    "style": rule_style,
    "freeze": rule_freeze,
    "zoom": rule_zoom,
    "row_props": rule_row_props,
    "col_props": rule_col_props,
    "data_validation": rule_data_validation,
    "chart": rule_chart,
    "pivot_table": rule_pivot_table,
}


@metric("compare_table")
def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    """1.0 when every rule in `options["rules"]` passes, else 0.0."""
    rules = options.get("rules", [])
    unknown = [r.get("type") for r in rules if r.get("type") not in RULES]
    if unknown:
        raise StateActError(f"compare_table rule type {unknown[0]!r} is not supported")
    books = Books(
        Book.open(result, "result"), Book.open(expected, "expected") if expected else None
    )
    return float(all(RULES[rule["type"]](books, rule) for rule in rules))


def csv_lines(path: str | None, strict: bool, ignore_case: bool) -> list[str] | None:
    if path is None or not Path(path).is_file():
        return None
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    if not strict:
        lines = [line.strip() for line in lines if line.strip()]
    return [line.lower() for line in lines] if ignore_case else lines


@metric("compare_csv")
def compare_csv(result: str | None, expected: str | list[str] | None, **options: Any) -> float:
    """1.0 when the result CSV equals one of the expected CSV files line for line."""
    strict, ignore_case = options.get("strict", True), options.get("ignore_case", False)
    got = csv_lines(result, strict, ignore_case)
    if got is None:
        return 0.0
    golds = expected if isinstance(expected, list) else [expected]
    return float(any(got == csv_lines(gold, strict, ignore_case) for gold in golds))
