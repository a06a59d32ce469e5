#!/usr/bin/env bash
# Reference solution: load every release through the button, then read versions, dates and notes from the DOM.
set -euo pipefail
python3 - <<'PY'
import json, re, time
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
    while not page.is_disabled("#more"):
        page.click("#more")
    releases = page.eval_on_selector_all(
        "details.release", "ds => ds.map(d => [d.querySelector('summary').textContent, d.querySelector('ul').textContent])")
    browser.close()
found = []
for summary, notes in releases:
    version, date = re.match(r"Version (\S+) \(released (\S+)\)", summary).groups()
    if "security" in notes.lower():
        found.append({"version": version, "date": date})
found.sort(key=lambda r: tuple(int(p) for p in r["version"].split(".")), reverse=True)
json.dump({"releases": found}, open("/home/user/security_releases.json", "w"), indent=2)
PY
