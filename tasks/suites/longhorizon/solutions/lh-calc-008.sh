#!/usr/bin/env bash
# Reference solution: one sheet per region, alphabetical, rows in original order.
set -euo pipefail
python3 - <<'PY'
import openpyxl
path = "/home/user/master_orders.xlsx"
wb = openpyxl.load_workbook(path)
rows = list(wb["Master"].iter_rows(values_only=True))
for region in sorted({r[1] for r in rows[1:]}):
    ws = wb.create_sheet(region)
    ws.append(rows[0])
    for row in rows[1:]:
        if row[1] == region:
            ws.append(row)
wb.save(path)
PY
