#!/usr/bin/env bash
# Reference solution: parse the markdown outline and build the deck with python-pptx's default layouts.
set -euo pipefail
python3 - <<'PY'
from pptx import Presentation
title, sections = None, []
for line in open("/home/user/falcon_outline.md", encoding="utf-8").read().splitlines():
    if line.startswith("## "):
        sections.append((line[3:], []))
    elif line.startswith("# "):
        title = line[2:]
    elif line.startswith("- "):
        sections[-1][1].append(line[2:])
prs = Presentation()
slide = prs.slides.add_slide(prs.slide_layouts[0])
slide.shapes.title.text = title
slide.placeholders[1].text = "Kickoff meeting, 2 September 2024"
for name, items in sections:
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = name
    slide.placeholders[1].text_frame.text = "\n".join(items)
    slide.notes_slide.notes_text_frame.text = f"{len(items)} points"
prs.slides.add_slide(prs.slide_layouts[5]).shapes.title.text = "Questions?"
prs.save("/home/user/falcon.pptx")
PY
