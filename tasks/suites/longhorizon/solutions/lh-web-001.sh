#!/usr/bin/env bash
# Reference solution: drive the quote calculator in headless Chromium for every request.
set -euo pipefail
python3 - <<'PY'
import csv, time
from playwright.sync_api import sync_playwright
URL = "http://127.0.0.1:8000/"
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page()
    for attempt in range(40):  # the setup's web server may still be starting
        try:
            page.goto(URL)
            break
        except Exception:
            time.sleep(0.25)
    quotes = []
    for req in csv.DictReader(open("/home/user/quote_requests.csv", newline="")):
        page.goto(URL)
        page.select_option("#plan", req["plan"])
        page.fill("#seats", req["seats"])
        chosen = set(filter(None, req["addons"].split(";")))
        for addon in ("sso", "audit", "support"):
            page.set_checked(f"#addon-{addon}", addon in chosen)
        page.check(f"#billing-{req['billing']}")
        page.click("#calculate")
        shown = page.text_content("#result")
        quotes.append((req["request_id"], shown.split("$", 1)[1].replace(",", "")))
    browser.close()
with open("/home/user/quotes.csv", "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["request_id", "monthly_total"])
    writer.writerows(quotes)
PY
