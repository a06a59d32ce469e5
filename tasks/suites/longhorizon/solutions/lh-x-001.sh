#!/usr/bin/env bash
# Reference solution: survey CSV -> workbook with statistics -> Writer report.
set -euo pipefail
python3 - <<'PY'
import csv, statistics
import docx, openpyxl
base = "/home/user/survey"
rows = list(csv.reader(open(f"{base}/survey.csv", newline="")))
header, body = rows[0], [[r[0], r[1], *map(int, r[2:])] for r in rows[1:]]
wb = openpyxl.Workbook()
responses = wb.active
responses.title = "Responses"
for row in [header, *body]:
    responses.append(row)
stats_sheet = wb.create_sheet("Stats")
stats_sheet.append(["Question", "Mean", "Min", "Max"])
stats = []
for k, question in enumerate(header[2:], start=2):
    column = [r[k] for r in body]
    stats.append((question, round(statistics.mean(column), 2), min(column), max(column)))
    stats_sheet.append(list(stats[-1]))
wb.save(f"{base}/survey.xlsx")
doc = docx.Document()
doc.add_paragraph("Survey Results", style="Title")
doc.add_paragraph(f"Responses: {len(body)}")
for question, mean, low, high in stats:
    doc.add_paragraph(f"{question}: mean {mean:.2f} (min {low}, max {high})")
doc.add_paragraph(f"Lowest-rated question: {min(stats, key=lambda s: (s[1], s[0]))[0]}")
doc.save(f"{base}/survey_report.docx")
PY
