#!/usr/bin/env bash
# Reference solution: items below reorder level with supplier names, into a new workbook.
set -euo pipefail
python3 - <<'PY'
import openpyxl
src = openpyxl.load_workbook("/home/user/inventory.xlsx")
names = {sid: name for sid, name in src["Suppliers"].iter_rows(min_row=2, values_only=True)}
rows = [r for r in src["Stock"].iter_rows(min_row=2, values_only=True) if r[2] < r[3]]
out = openpyxl.Workbook()
ws = out.active
ws.title = "Reorder"
ws.append(["SKU", "Description", "SupplierName", "OrderQty"])
for sku, desc, on_hand, level, supplier in sorted(rows):
    ws.append([sku, desc, names[supplier], 2 * level - on_hand])
out.save("/home/user/reorder.xlsx")
PY
