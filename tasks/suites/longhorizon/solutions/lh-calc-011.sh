#!/usr/bin/env bash
# Reference solution: union of products over the quarter sheets with per-quarter units.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
path = "/home/user/quarterly_units.xlsx"
wb = openpyxl.load_workbook(path)
quarters = ["Q1", "Q2", "Q3", "Q4"]
units = defaultdict(lambda: [0] * 4)
for q, name in enumerate(quarters):
    for product, count in wb[name].iter_rows(min_row=2, values_only=True):
        units[product][q] = count
ws = wb.create_sheet("Annual")
ws.append(["Product", *quarters, "Total"])
for product in sorted(units):
    ws.append([product, *units[product], sum(units[product])])
wb.save(path)
PY
