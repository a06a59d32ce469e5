#!/usr/bin/env bash
# Reference solution: averages as values, letter grades, hidden withdrawn rows, grade counts of active students.
set -euo pipefail
python3 - <<'PY'
import openpyxl
path = "/home/user/gradebook.xlsx"
wb = openpyxl.load_workbook(path)
ws = wb["Students"]
ws["H1"], ws["I1"] = "Average", "Grade"
counts = {"A": 0, "B": 0, "C": 0, "F": 0}
for r in range(2, ws.max_row + 1):
    scores = [ws.cell(r, c).value for c in range(4, 8)]
    avg = round(sum(scores) / 4 + 1e-9, 1)
    grade = "A" if avg >= 90 else "B" if avg >= 80 else "C" if avg >= 70 else "F"
    ws.cell(r, 8, avg).number_format = "0.0"
    ws.cell(r, 9, grade)
    if ws.cell(r, 3).value == "W":
        ws.row_dimensions[r].hidden = True
    else:
        counts[grade] += 1
stats = wb.create_sheet("Stats")
stats.append(["Grade", "Count"])
for grade, count in counts.items():
    stats.append([grade, count])
wb.save(path)
PY
