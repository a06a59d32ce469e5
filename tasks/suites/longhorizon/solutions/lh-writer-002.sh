#!/usr/bin/env bash
# Reference solution: compute the figures from the CSV and fill the template's placeholders.
set -euo pipefail
python3 - <<'PY'
import copy, csv
from collections import defaultdict
import docx
base = "/home/user/Documents"
rev = {"Region": defaultdict(float), "Rep": defaultdict(float), "Product": defaultdict(float)}
count = 0
with open(f"{base}/q3_sales.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        value = int(row["Units"]) * float(row["UnitPrice"])
        count += 1
        for key in rev:
            rev[key][row[key]] += value
money = lambda v: f"${v:,.2f}"
values = {"{{QUARTER}}": "Q3 2024", "{{TOTAL_REVENUE}}": money(sum(rev["Region"].values())),
          "{{ORDER_COUNT}}": str(count), "{{TOP_PRODUCT}}": max(rev["Product"], key=rev["Product"].get),
          "{{BEST_REP}}": max(rev["Rep"], key=rev["Rep"].get)}
doc = docx.Document(f"{base}/report_template.docx")
for p in doc.paragraphs:
    if p.text == "{{REGION_LINES}}":
        for region in sorted(rev["Region"]):
            clone = copy.deepcopy(p._element)
            p._element.addprevious(clone)
            docx.text.paragraph.Paragraph(clone, p._parent).text = f"{region}: {money(rev['Region'][region])}"
        p._element.getparent().remove(p._element)
        continue
    text = p.text
    for key, value in values.items():
        text = text.replace(key, value)
    if text != p.text:
        p.text = text
doc.save(f"{base}/report_final.docx")
PY
