#!/usr/bin/env bash
# Reference solution: apply the price list with audit rows, list unknown SKUs, write the change report.
set -euo pipefail
python3 - <<'PY'
import csv, sqlite3
app = "/home/user/app"
db = sqlite3.connect(f"{app}/shop.db")
unknown, report = [], []
with open(f"{app}/price_changes.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        found = db.execute("SELECT id, price FROM products WHERE sku = ?", (row["sku"],)).fetchone()
        if found is None:
            unknown.append(row["sku"])
            continue
        pid, old = found
        new = float(row["new_price"])
        if round(old, 2) == new:
            continue
        db.execute("UPDATE products SET price = ? WHERE id = ?", (new, pid))
        db.execute("INSERT INTO price_audit (product_id, old_price, new_price, changed_on) VALUES (?, ?, ?, '2024-10-01')",
                   (pid, old, new))
        report.append([row["sku"], f"{old:.2f}", f"{new:.2f}", f"{(new - old) / old * 100:.1f}"])
db.commit()
with open(f"{app}/unknown_skus.txt", "w") as fh:
    fh.writelines(s + "\n" for s in unknown)
with open(f"{app}/price_report.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["sku", "old_price", "new_price", "change_pct"])
    writer.writerows(report)
PY
