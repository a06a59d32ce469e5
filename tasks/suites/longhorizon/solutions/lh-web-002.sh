#!/usr/bin/env bash
# Reference solution: sign in, page through the live table and keep rows below their reorder level.
set -euo pipefail
python3 - <<'PY'
import csv, time
from playwright.sync_api import sync_playwright
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page()
    for attempt in range(40):  # the setup's web server may still be starting
        try:
            page.goto("http://127.0.0.1:8000/")
            break
        except Exception:
            time.sleep(0.25)
    page.fill("#user", "ops")
    page.fill("#password", "stock-2024")
    page.click("#sign-in")
    low = []
    while True:
        for cells in page.eval_on_selector_all("#items tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"):
            sku, name, qty, reorder = cells
            if int(qty) < int(reorder):
                low.append((sku, name, int(qty)))
        if page.is_disabled("#next"):
            break
        page.click("#next")
    browser.close()
with open("/home/user/low_stock.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["sku", "name", "qty"])
    writer.writerows(sorted(low))
PY
