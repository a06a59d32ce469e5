#!/usr/bin/env bash
# Reference solution (by code; an agent would use View > Zoom, View > Freeze Cells and the sheet tab menu).
set -euo pipefail
python3 - <<'PY'
import openpyxl
path = "/home/user/dashboard.xlsx"
wb = openpyxl.load_workbook(path)
wb["Dashboard"].sheet_view.zoomScale = 150
wb["Dashboard"].freeze_panes = "B3"
wb["Sheet2"].title = "Raw"
wb.save(path)
PY
