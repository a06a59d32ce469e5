#!/usr/bin/env bash
# Reference solution: Revenue formulas, number format, frozen header, Summary sheet of region totals.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
path = "/home/user/sales_q3.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Orders"]
ws["G1"] = "Revenue"
totals = defaultdict(lambda: [0.0, 0])
for r in range(2, ws.max_row + 1):
    ws.cell(r, 7, f"=E{r}*F{r}").number_format = "#,##0.00"
    region = ws.cell(r, 2).value
    totals[region][0] += ws.cell(r, 5).value * ws.cell(r, 6).value
    totals[region][1] += 1
ws.freeze_panes = "A2"
summary = wb.create_sheet("Summary")
summary.append(["Region", "Revenue", "Orders"])
for region, (revenue, count) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
    summary.append([region, round(revenue, 2), count])
wb.save(path)
PY
