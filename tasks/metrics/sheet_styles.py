"""The `style` rule's view of a sheet: each cell's listed style properties, with the cells a
conditional format makes active carrying that format's style instead (as OSWorld computes it).

A conditional format's formulas are evaluated with the `formulas` library, the one OSWorld uses, so
that which cells count as active is the same. Absolute references (`$A$1`) are read from the file's
stored values; relative ones take the tested cell's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import formulas
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.cell_range import CellRange
from openpyxl.worksheet.worksheet import Worksheet

from harness.kernel.core import StateActError
from tasks.metrics.sheets import read_cell_value, style_value

ABSOLUTE_RANGE = re.compile(r"\$([A-Z]{1,3})\$(\d+)(?::\$([A-Z]{1,3})\$(\d+))?")
TEXT_TYPES = {
    "expression",
    "containsText",
    "notContainsText",
    "endsWith",
    "beginsWith",
    "containsErrors",
    "notContainsErrors",
}
EMPTY_RUN_LIMIT = 50
"""OSWorld stops testing a range's cells after more than this many empty cells in a row."""


def cell_is(op: str, value: Any, refs: list[Any]) -> bool:
    """A `cellIs` rule's condition; a type mismatch or a missing bound counts as inactive."""
    try:
        if op == "lessThanOrEqual":
            return value <= refs[0]
        if op == "lessThan":
            return value < refs[0]
        if op == "equal":
            return value == refs[0]
        if op == "greaterThanOrEqual":
            return value >= refs[0]
        if op == "notEqual":
            return value != refs[0]
        if op == "greaterThan":
            return value > refs[0]
        if op in ("between", "notBetween"):
            low, high = min(refs), max(refs)
            inside = low <= value <= high
            return inside if op == "between" else (value < low or value > high)
    except (TypeError, IndexError):
        return False
    # OSWorld logs an unknown operator and then fails on the unset result.
    raise UnboundLocalError(f"conditional format operator {op!r} is not implemented")


def absolute_arguments(formula: str, path: str, sheet: str) -> list[Any]:
    """The stored values of a formula's absolute references, in order.

    A lone cell (`$A$1`) makes OSWorld build the range `A1:`, which openpyxl rejects: that error
    is kept, as it decides OSWorld's verdict.
    """
    arguments = []
    for col1, row1, col2, row2 in ABSOLUTE_RANGE.findall(formula):
        bounds = CellRange(f"{col1}{row1}:{col2}{row2}")
        arguments.append(
            [read_cell_value(path, sheet, f"{get_column_letter(c)}{r}") for r, c in bounds.cells]
        )
    return arguments


SKIP = object()
"""A rule OSWorld skips (a formula that does not parse or compute)."""


def rule_condition(rule: Any, path: str, sheet: str, parser: Any) -> Any:
    """A test of one cell value for `rule`; SKIP for a broken rule, None for a type OSWorld
    lacks."""
    compiled, argument_lists = [], []
    for formula in rule.formula:
        try:
            function = parser.ast("=" + formula)[1].compile()
        except Exception:  # noqa: BLE001 -- OSWorld skips a rule whose formula does not parse
            return SKIP
        argument_lists.append(absolute_arguments(formula, path, sheet))
        compiled.append(function)
    if rule.type in TEXT_TYPES:
        condition, arguments = compiled[0], argument_lists[0]
        return lambda value: condition(value, *arguments)
    if rule.type == "cellIs":
        try:
            refs = [function() for function in compiled]
        except Exception:  # noqa: BLE001 -- OSWorld skips a rule whose bounds do not compute
            return SKIP
        return lambda value: cell_is(rule.operator, value, refs)
    return None


def never_active(value: Any) -> bool:
    return False


def load_styles(sheet: Worksheet, path: str, sheet_name: str, props: list[str]) -> dict:
    """{coordinate: [property values]} over the sheet's cells, conditional formats applied."""
    styles = {}
    for column in sheet.iter_cols():
        for cell in column:
            styles[cell.coordinate] = [style_value(p, cell) for p in props]
    parser = formulas.Parser()
    # A rule type OSWorld does not implement (top10, aboveAverage, ...) reuses the test of the
    # rule before it, as OSWorld's leftover loop variable does; with none before, no cell is active.
    is_active: Callable = never_active
    for formatting in sheet.conditional_formatting:
        for rule in formatting.rules:
            condition = rule_condition(rule, path, sheet_name, parser)
            if condition is SKIP:
                continue
            if condition is not None:
                is_active = condition
            for cell in active_cells(sheet, formatting, rule, is_active, path, sheet_name):
                styles[cell.coordinate] = [style_value(p, cell, rule.dxf) for p in props]
    return styles


def active_cells(sheet, formatting, rule, is_active: Callable, path: str, sheet_name: str) -> list:
    """The cells of `formatting`'s ranges that `is_active` accepts."""
    active = []
    empty_run = 0
    for cell_range in formatting.cells:
        for row, col in cell_range.cells:
            cell = sheet.cell(row=row, column=col)
            value = read_cell_value(path, sheet_name, f"{get_column_letter(col)}{row}")
            if value is None:
                empty_run += 1
                if empty_run > EMPTY_RUN_LIMIT:
                    break
                continue
            try:
                hit = is_active(value)
            except Exception:  # noqa: BLE001 -- OSWorld counts a failing test as inactive
                hit = False
            if hit:
                if not rule.formula:
                    # OSWorld logs the rule's first formula for each active cell; a rule without
                    # one (top10 reusing an earlier rule's test) fails there.
                    raise StateActError(
                        f"conditional format {rule.type!r} has no formula to report (as OSWorld)"
                    )
                active.append(cell)
    return active
