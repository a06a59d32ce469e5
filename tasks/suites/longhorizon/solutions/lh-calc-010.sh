#!/usr/bin/env bash
# Reference solution: rename, currency and percent formats, hidden column, frozen panes, Notes sheet.
set -euo pipefail
python3 - <<'PY'
import openpyxl
path = "/home/user/statement.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Sheet1"]
ws.title = "FY2024"
for r in range(2, ws.max_row + 1):
    ws.cell(r, 3).number_format = "$#,##0.00"
    ws.cell(r, 4).number_format = "0.0%"
ws.column_dimensions["A"].hidden = True
ws.freeze_panes = "C2"
wb.create_sheet("Notes").append(["Prepared by", "Finance"])
wb.save(path)
PY
