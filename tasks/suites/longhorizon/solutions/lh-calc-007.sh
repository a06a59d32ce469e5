#!/usr/bin/env bash
# Reference solution: hours per row from HH:MM text, weekly totals and overtime.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
path = "/home/user/timesheet.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Log"]
ws["E1"] = "Hours"
totals = defaultdict(float)
def minutes(text):
    hours, mins = text.split(":")
    return int(hours) * 60 + int(mins)
for r in range(2, ws.max_row + 1):
    hours = (minutes(ws.cell(r, 4).value) - minutes(ws.cell(r, 3).value)) / 60
    ws.cell(r, 5, hours)
    totals[ws.cell(r, 2).value] += hours
weekly = wb.create_sheet("Weekly")
weekly.append(["Employee", "TotalHours", "Overtime"])
for name in sorted(totals):
    weekly.append([name, totals[name], max(0.0, totals[name] - 40)])
wb.save(path)
PY
