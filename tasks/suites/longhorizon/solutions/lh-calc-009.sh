#!/usr/bin/env bash
# Reference solution: annuity schedule with cent rounding at every step.
set -euo pipefail
python3 - <<'PY'
from decimal import ROUND_HALF_UP, Decimal
import openpyxl
path = "/home/user/loan.xlsx"
wb = openpyxl.load_workbook(path)
params = {k: v for k, v in wb["Parameters"].iter_rows(min_row=2, values_only=True)}
def cents(x):
    return float(Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
r, n, balance = params["AnnualRate"] / 12, int(params["Months"]), params["Principal"]
payment = cents(balance * r / (1 - (1 + r) ** -n))
ws = wb.create_sheet("Schedule")
ws.append(["Month", "Payment", "Interest", "Principal", "Balance"])
for month in range(1, n + 1):
    interest = cents(balance * r)
    principal = cents(payment - interest)
    balance = cents(balance - principal)
    ws.append([month, payment, interest, principal, balance])
wb.save(path)
PY
