#!/usr/bin/env bash
# Reference solution: walk the document body in order, pairing each caption with the table after it.
set -euo pipefail
python3 - <<'PY'
import re
import docx, openpyxl
from docx.table import Table
from docx.text.paragraph import Paragraph
doc = docx.Document("/home/user/Documents/annual_plan.docx")
def typed(text):
    plain = text.replace(",", "")
    if re.fullmatch(r"-?\d+", plain):
        return int(plain)
    if re.fullmatch(r"-?\d+\.\d+", plain):
        return float(plain)
    return text
wb = openpyxl.Workbook()
wb.remove(wb.active)
caption = None
for child in doc.element.body.iterchildren():
    if child.tag.endswith("}p"):
        match = re.match(r"^Table \d+: (.+)$", Paragraph(child, doc).text)
        caption = match.group(1) if match else caption
    elif child.tag.endswith("}tbl"):
        ws = wb.create_sheet(caption)
        for index, row in enumerate(Table(child, doc).rows):
            ws.append([cell.text if index == 0 else typed(cell.text) for cell in row.cells])
wb.save("/home/user/Documents/plan_tables.xlsx")
PY
