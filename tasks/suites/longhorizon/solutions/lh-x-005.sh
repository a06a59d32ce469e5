#!/usr/bin/env bash
# Reference solution: query the ticket database into a Writer report and a CSV of open counts.
set -euo pipefail
python3 - <<'PY'
import csv, sqlite3
import docx
db = sqlite3.connect("/home/user/support/tickets.db")
p1 = db.execute("SELECT key, opened, owner, title FROM tickets WHERE priority = 'P1' AND state = 'open' ORDER BY opened, key").fetchall()
doc = docx.Document()
doc.add_paragraph("Open P1 Tickets", style="Title")
for key, opened, owner, title in p1:
    doc.add_paragraph(f"{key} (opened {opened}, owner {owner}): {title}")
doc.add_paragraph(f"Open P1 tickets: {len(p1)}")
doc.save("/home/user/support/p1_open.docx")
with open("/home/user/support/open_by_priority.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["priority", "open_tickets"])
    for priority in ("P1", "P2", "P3"):
        count = db.execute("SELECT COUNT(*) FROM tickets WHERE priority = ? AND state = 'open'", (priority,)).fetchone()[0]
        writer.writerow([priority, count])
PY
