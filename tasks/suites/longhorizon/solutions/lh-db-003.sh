#!/usr/bin/env bash
# Reference solution: merge customers with case-insensitively equal emails into the lowest id.
set -euo pipefail
python3 - <<'PY'
import csv, sqlite3
db = sqlite3.connect("/home/user/app/crm.db")
keep, merged = {}, []
for cid, email in db.execute("SELECT id, email FROM customers ORDER BY id").fetchall():
    kept = keep.setdefault(email.lower(), cid)
    if kept != cid:
        db.execute("UPDATE orders SET customer_id = ? WHERE customer_id = ?", (kept, cid))
        db.execute("DELETE FROM customers WHERE id = ?", (cid,))
        merged.append((cid, kept))
db.execute("UPDATE customers SET email = lower(email)")
db.commit()
with open("/home/user/app/merge_log.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["removed_id", "kept_id"])
    writer.writerows(sorted(merged))
PY
