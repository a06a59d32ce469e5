#!/usr/bin/env bash
# Reference solution: parse ACTION lines from the minutes into a sorted action-item document.
set -euo pipefail
python3 - <<'PY'
import re
import docx
minutes = docx.Document("/home/user/Documents/minutes.docx")
items = []
for p in minutes.paragraphs:
    match = re.match(r"^ACTION: (\S+) to (.+) by (\d{4}-\d{2}-\d{2})\.$", p.text)
    if match:
        items.append((match.group(3), match.group(1), match.group(2)))
out = docx.Document()
out.add_paragraph("Action Items", style="Heading 1")
for due, owner, task in sorted(items):
    out.add_paragraph(f"{due} - {owner}: {task}")
out.add_paragraph(f"Total: {len(items)} items")
out.save("/home/user/Documents/action_items.docx")
PY
