#!/usr/bin/env bash
# Reference solution: live SUM formulas for row and column totals, number format, frozen panes.
set -euo pipefail
python3 - <<'PY'
import openpyxl
path = "/home/user/budget_h1.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Budget"]
ws["H1"], ws["A10"] = "Total", "Total"
for r in range(2, 10):
    ws[f"H{r}"] = f"=SUM(B{r}:G{r})"
for col in "BCDEFGH":
    ws[f"{col}10"] = f"=SUM({col}2:{col}9)"
for row in ws["B2:H10"]:
    for cell in row:
        cell.number_format = "#,##0.00"
ws.freeze_panes = "B2"
wb.save(path)
PY
