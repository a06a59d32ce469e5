"""Regenerate the spreadsheet differential cases' inputs: `python -m
tests.osworld_cases.make_sheet_cases`.

Writes `table/` and `csv/` (input files plus cases.json). A case whose metric, expected value and
options are unchanged keeps its recorded verdict; new or changed cases get `"score": null` until
OSWorld's own function is run on them again (docs/osworld-fidelity.md says how).
"""

from __future__ import annotations

from tests.osworld_cases import (
    sheet_gen_cells,
    sheet_gen_charts,
    sheet_gen_data,
    sheet_gen_objects,
    sheet_gen_pivots,
    sheet_gen_tasks,
)
from tests.osworld_cases.sheet_gen_common import CaseSet


def main() -> None:
    table = CaseSet("table")
    table.reset()
    for build in (
        sheet_gen_data.sheet_data_cases,
        sheet_gen_data.sheet_name_cases,
        sheet_gen_data.sheet_print_cases,
        sheet_gen_data.sheet_fuzzy_cases,
        sheet_gen_cells.check_cell_cases,
        sheet_gen_objects.style_cases,
        sheet_gen_objects.freeze_cases,
        sheet_gen_objects.zoom_cases,
        sheet_gen_objects.dv_cases,
        sheet_gen_objects.dims_cases,
        sheet_gen_objects.filter_cases,
        sheet_gen_charts.chart_cases,
        sheet_gen_pivots.pivot_cases,
        sheet_gen_pivots.shared_string_cases,
        sheet_gen_charts.anchor_cases,
        sheet_gen_tasks.task_cases,
    ):
        build(table)
    table.write()
    csv = CaseSet("csv")
    csv.reset()
    sheet_gen_cells.csv_cases(csv)
    csv.write()
    print(f"{len(table.cases)} table cases, {len(csv.cases)} csv cases")


if __name__ == "__main__":
    main()
