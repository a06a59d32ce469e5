#!/usr/bin/env bash
# Reference solution: retitle, refresh the table and highlights from the CSV, drop the appendix, add notes.
set -euo pipefail
python3 - <<'PY'
import csv
from pptx import Presentation
path = "/home/user/quarterly_review.pptx"
with open("/home/user/q3_numbers.csv", newline="") as fh:
    q3 = {r["Region"]: r for r in csv.DictReader(fh)}
prs = Presentation(path)
slides = list(prs.slides)
slides[0].shapes.title.text = "Q3 Business Review"
slides[0].notes_slide.notes_text_frame.text = "Presenter: Dana Whitfield"
def set_cell(cell, text):
    cell.text_frame.paragraphs[0].runs[0].text = text
for slide in slides:
    title = slide.shapes.title.text
    if title == "Revenue by region":
        table = next(s for s in slide.shapes if s.has_table).table
        for row in list(table.rows)[1:]:
            data = q3[row.cells[0].text]
            set_cell(row.cells[1], f"{int(data['Revenue']):,}")
            set_cell(row.cells[2], f"{float(data['GrowthPct']):.1f}%")
    elif title == "Highlights":
        total = sum(int(r["Revenue"]) for r in q3.values())
        best = max(q3.values(), key=lambda r: int(r["Revenue"]))["Region"]
        slide.placeholders[1].text_frame.text = f"Total revenue: ${total:,}\nBest region: {best}"
    elif title == "Appendix: legacy metrics":
        ids = prs.slides._sldIdLst
        for sld in list(ids):
            if prs.part.related_part(sld.rId) is slide.part:
                prs.part.drop_rel(sld.rId)
                ids.remove(sld)
prs.save(path)
PY
