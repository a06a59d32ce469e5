#!/usr/bin/env bash
# Reference solution: speaker notes from the script, plus a closing slide of the script's figures.
set -euo pipefail
python3 - <<'PY'
import re
from pptx import Presentation
path = "/home/user/annual_update.pptx"
prs = Presentation(path)
slides = list(prs.slides)
for line in open("/home/user/talk_script.txt", encoding="utf-8"):
    match = re.match(r"^Slide (\d+): (.*)$", line.strip())
    if match:
        slides[int(match.group(1)) - 1].notes_slide.notes_text_frame.text = match.group(2)
slide = prs.slides.add_slide(prs.slide_layouts[1])
slide.shapes.title.text = "Key numbers"
slide.placeholders[1].text_frame.text = "12 percent revenue growth\n2.1 percent churn\n2 engineers"
prs.save(path)
PY
