#!/usr/bin/env bash
# Reference solution: one SQL aggregate over complete Q3 orders, written to a new workbook.
set -euo pipefail
mkdir -p /home/user/reports
python3 - <<'PY'
import sqlite3
import openpyxl
db = sqlite3.connect("/home/user/app/crm.db")
rows = db.execute("""
    SELECT c.name, c.city, COUNT(*), ROUND(SUM(o.amount), 2) AS total
    FROM orders o JOIN customers c ON c.id = o.customer_id
    WHERE o.status = 'complete' AND o.order_date BETWEEN '2024-07-01' AND '2024-09-30'
    GROUP BY c.id ORDER BY total DESC""").fetchall()
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "ByCustomer"
ws.append(["Customer", "City", "Orders", "Total"])
for row in rows:
    ws.append(list(row))
wb.save("/home/user/reports/customer_totals.xlsx")
PY
