#!/usr/bin/env bash
# Reference solution: read the rates from the local intranet page, convert, write workbook and memo.
set -euo pipefail
python3 - <<'PY'
import csv, urllib.request
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
import docx, openpyxl
from lxml import html
page = html.fromstring(urllib.request.urlopen("http://127.0.0.1:8000/", timeout=10).read())
rates = {"EUR": 1.0}
for row in page.xpath("//table[@id='rates']//tr[td]"):
    currency, rate = (td.text_content().strip() for td in row.xpath("td"))
    rates[currency] = float(rate)
def cents(x):
    return float(Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
base = "/home/user/finance"
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Invoices"
ws.append(["InvoiceID", "Currency", "Amount", "RateToEUR", "AmountEUR"])
totals, lines = defaultdict(float), []
for row in csv.DictReader(open(f"{base}/invoices.csv", newline="")):
    amount, rate = float(row["Amount"]), rates[row["Currency"]]
    eur = cents(amount * rate)
    ws.append([row["InvoiceID"], row["Currency"], amount, rate, eur])
    totals[row["Currency"]] += eur
    lines.append((row["InvoiceID"], eur))
sheet = wb.create_sheet("Totals")
sheet.append(["Currency", "AmountEUR"])
for currency in sorted(totals):
    sheet.append([currency, round(totals[currency], 2)])
wb.save(f"{base}/invoices_eur.xlsx")
largest = max(lines, key=lambda l: l[1])
doc = docx.Document()
doc.add_paragraph("Invoices in EUR", style="Title")
doc.add_paragraph(f"Total of {len(lines)} invoices: EUR {sum(e for _, e in lines):,.2f}")
doc.add_paragraph(f"Largest invoice: {largest[0]} (EUR {largest[1]:,.2f})")
doc.add_paragraph("Rates: treasury reference rates of 30 September 2024")
doc.save(f"{base}/eur_memo.docx")
PY
