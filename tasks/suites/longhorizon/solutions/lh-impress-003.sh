#!/usr/bin/env bash
# Reference solution: drop the draft slide, sort numbered slides, rewrite the agenda from their titles.
set -euo pipefail
python3 - <<'PY'
from pptx import Presentation
path = "/home/user/readout.pptx"
prs = Presentation(path)
ids = prs.slides._sldIdLst
entries = [(sld, prs.part.related_part(sld.rId).slide) for sld in ids]
for sld, slide in entries:
    if slide.shapes.title.text.startswith("DRAFT"):
        prs.part.drop_rel(sld.rId)
        ids.remove(sld)
entries = [(sld, prs.part.related_part(sld.rId).slide) for sld in ids]
numbered = sorted((e for e in entries if e[1].shapes.title.text[:1].isdigit()), key=lambda e: e[1].shapes.title.text)
for sld, _ in numbered:
    ids.remove(sld)
    ids.append(sld)
agenda = next(slide for _, slide in entries if slide.shapes.title.text == "Agenda")
agenda.placeholders[1].text_frame.text = "\n".join(slide.shapes.title.text for _, slide in numbered)
prs.save(path)
PY
