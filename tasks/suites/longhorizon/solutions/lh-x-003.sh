#!/usr/bin/env bash
# Reference solution: per-region figures from the workbook, one slide per region.
set -euo pipefail
python3 - <<'PY'
from collections import defaultdict
import openpyxl
from pptx import Presentation
rows = list(openpyxl.load_workbook("/home/user/regional_sales.xlsx")["Orders"].iter_rows(min_row=2, values_only=True))
prs = Presentation()
slide = prs.slides.add_slide(prs.slide_layouts[0])
slide.shapes.title.text = "Regional Sales Q3"
slide.placeholders[1].text = "Generated from regional_sales.xlsx"
for region in sorted({r[1] for r in rows}):
    mine = [r for r in rows if r[1] == region]
    by_product = defaultdict(float)
    for r in mine:
        by_product[r[3]] += r[4] * r[5]
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = f"Region: {region}"
    slide.placeholders[1].text_frame.text = "\n".join([
        f"Revenue: ${sum(by_product.values()):,.2f}", f"Orders: {len(mine)}",
        f"Top product: {max(by_product, key=by_product.get)}"])
prs.save("/home/user/regional_sales.pptx")
PY
