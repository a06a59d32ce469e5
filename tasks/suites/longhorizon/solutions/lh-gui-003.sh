#!/usr/bin/env bash
# Reference solution (by code; an agent would use Slide > Slide Properties and Format > Character).
set -euo pipefail
python3 - <<'PY'
from pptx import Presentation
from pptx.dml.color import RGBColor
path = "/home/user/brand.pptx"
prs = Presentation(path)
for slide in prs.slides:
    slide.background.fill.solid()
    slide.background.fill.fore_color.rgb = RGBColor(0x1F, 0x38, 0x64)
    for paragraph in slide.shapes.title.text_frame.paragraphs:
        for run in paragraph.runs:
            run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
prs.save(path)
PY
