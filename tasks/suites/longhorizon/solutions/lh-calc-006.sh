#!/usr/bin/env bash
# Reference solution: normalise names/emails/phones, drop later duplicates by email, sort, export CSV.
set -euo pipefail
python3 - <<'PY'
import csv, re
import openpyxl
ws = openpyxl.load_workbook("/home/user/contacts.xlsx")["Contacts"]
def title(word):
    return "'".join(part.capitalize() for part in word.split("'"))
seen, rows = set(), []
for name, email, phone in ws.iter_rows(min_row=2, values_only=True):
    email = email.strip().lower()
    if email in seen:
        continue
    seen.add(email)
    digits = re.sub(r"\D", "", str(phone))
    rows.append([" ".join(title(w) for w in name.split()), email, f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"])
rows.sort(key=lambda r: (r[0].split()[-1].lower(), r[0].lower()))
with open("/home/user/contacts_clean.csv", "w", newline="", encoding="utf-8") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["Name", "Email", "Phone"])
    writer.writerows(rows)
PY
