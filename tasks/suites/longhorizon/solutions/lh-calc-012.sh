#!/usr/bin/env bash
# Reference solution: Revenue formulas plus a KPI sheet of computed values.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
path = "/home/user/orders_kpi.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Data"]
ws["G1"] = "Revenue"
revenue, by_region = [], defaultdict(float)
for r in range(2, ws.max_row + 1):
    ws[f"G{r}"] = f"=E{r}*F{r}"
    value = ws[f"E{r}"].value * ws[f"F{r}"].value
    revenue.append(value)
    by_region[ws[f"B{r}"].value] += value
kpi = wb.create_sheet("KPI")
kpi.append(["Total revenue", round(sum(revenue), 2)])
kpi.append(["Average order value", round(sum(revenue) / len(revenue), 2)])
kpi.append(["Top region", max(by_region, key=by_region.get)])
kpi.append(["Orders over 1000", sum(1 for v in revenue if v > 1000)])
wb.save(path)
PY
