#!/usr/bin/env bash
# Reference solution: category x month pivot computed in Python, written as values.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
path = "/home/user/transactions.xlsx"
wb = openpyxl.load_workbook(path)
sums = defaultdict(float)
for _, cat, month, amount in wb["Transactions"].iter_rows(min_row=2, values_only=True):
    sums[cat, month] += amount
months = ["Jan", "Feb", "Mar", "Apr"]
cats = sorted({c for c, _ in sums})
ws = wb.create_sheet("Pivot")
ws.append(["Category", *months, "Total"])
for cat in cats:
    values = [sums[cat, m] for m in months]
    ws.append([cat, *[round(v, 2) for v in values], round(sum(values), 2)])
columns = [sum(sums[c, m] for c in cats) for m in months]
ws.append(["Grand Total", *[round(v, 2) for v in columns], round(sum(columns), 2)])
wb.save(path)
PY
