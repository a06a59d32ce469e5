#!/usr/bin/env bash
# Reference solution (by code; an agent would use Format > Cells): header style and number formats.
set -euo pipefail
python3 - <<'PY'
import openpyxl
from openpyxl.styles import Font, PatternFill
path = "/home/user/accounts.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Accounts"]
for cell in ws[1]:
    cell.font = Font(bold=True, size=12)
    cell.fill = PatternFill(fill_type="solid", fgColor="FFFFFF00")
for r in range(2, ws.max_row + 1):
    ws.cell(r, 2).number_format = "#,##0"
    ws.cell(r, 3).number_format = "#,##0;[RED]-#,##0"
    ws.cell(r, 4).number_format = "0.0%"
wb.save(path)
PY
