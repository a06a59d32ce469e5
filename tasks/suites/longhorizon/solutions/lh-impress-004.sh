#!/usr/bin/env bash
# Reference solution: uniform body font and size, bold titles.
set -euo pipefail
python3 - <<'PY'
from pptx import Presentation
from pptx.util import Pt
path = "/home/user/styles.pptx"
prs = Presentation(path)
for slide in prs.slides:
    for paragraph in slide.shapes.title.text_frame.paragraphs:
        for run in paragraph.runs:
            run.font.bold = True
    for paragraph in slide.placeholders[1].text_frame.paragraphs:
        for run in paragraph.runs:
            run.font.name = "DejaVu Sans"
            run.font.size = Pt(18)
prs.save(path)
PY
