#!/usr/bin/env bash
# Reference solution: regex redaction of emails and phones, drop the confidential paragraph, save a copy.
set -euo pipefail
python3 - <<'PY'
import re
import docx
doc = docx.Document("/home/user/Documents/incident_review.docx")
for p in list(doc.paragraphs):
    if p.text.startswith("CONFIDENTIAL NOTE"):
        p._element.getparent().remove(p._element)
        continue
    text = re.sub(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", "[REDACTED EMAIL]", p.text)
    text = re.sub(r"\+\d[\d ]{7,}\d", "[REDACTED PHONE]", text)
    if text != p.text:
        p.text = text
doc.save("/home/user/Documents/incident_review_redacted.docx")
PY
