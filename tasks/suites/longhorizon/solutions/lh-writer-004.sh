#!/usr/bin/env bash
# Reference solution: one letter per overdue recipient, placeholders filled from the CSV.
set -euo pipefail
mkdir -p /home/user/letters
python3 - <<'PY'
import csv
import docx
with open("/home/user/mailing/recipients.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        if row["status"] != "overdue":
            continue
        doc = docx.Document("/home/user/mailing/letter_template.docx")
        for p in doc.paragraphs:
            text = p.text
            for key in ("id", "name", "company", "amount", "due_date"):
                text = text.replace("{{%s}}" % key, row[key])
            if text != p.text:
                p.text = text
        doc.save(f"/home/user/letters/letter_{row['id']}.docx")
PY
