"""Runs INSIDE the sandbox: one WebArena browser operation, answered as one JSON line.

Usage: python3 -I webarena_browser.py '{"op": "...", ...}'.
- `login`: a fresh headless Chromium fills a site's login form (the form's recipe comes with the
  request) and prints the resulting storage state (cookies and local storage).
- `start`: the desktop's browser (DevTools on 127.0.0.1, launched by the task's setup) gets the
  signed-in cookies and opens the task's start pages, the first one on screen.
- `shop_api`: WebArena's shop REST helpers' calls (an admin token, then one GET), answered as
  the status and JSON.
- `observe`: a fresh headless Chromium with the given storage state plays `actions` (goto,
  evaluate, content) and prints each one's value and the page's URL. The harness runs it as the
  observer, after the agent's processes are ended: no profile, extension or page of the agent's.
Playwright and Chromium are the desktop image's; the only traffic is to the sites the request
names.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
ARGS += ["--disable-background-networking", "--disable-component-update"]
DESKTOP = "http://127.0.0.1:{port}"
SETTLE_MS = 3000  # WebArena's evaluator waits 3 s after each navigation


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


def locate(page, how, value):
    if how == "label":
        return page.get_by_label(value, exact=True)
    if how == "placeholder":
        return page.get_by_placeholder(value)
    if how == "test_id":
        return page.get_by_test_id(value)
    if how == "button":
        return page.get_by_role("button", name=value)
    raise SystemExit(f"unknown way to find a login field: {how!r}")


def login(playwright, request):
    browser = launch(playwright)
    try:
        context = browser.new_context()
        page = context.new_page()
        page.goto(request["url"], timeout=60000)
        form = request["form"]
        locate(page, *form["username"]).fill(request["username"])
        locate(page, *form["password"]).fill(request["password"])
        with page.expect_navigation(timeout=60000):
            locate(page, *form["submit"]).click()
        page.wait_for_load_state("load", timeout=60000)
        if locate(page, *form["password"]).count():
            raise SystemExit(f"the login form of {request['url']} is still shown after signing in")
        return {"state": context.storage_state(), "url": page.url}
    finally:
        browser.close()


def start(playwright, request):
    deadline = time.monotonic() + float(request.get("wait_s", 30))
    while True:
        try:
            browser = playwright.chromium.connect_over_cdp(DESKTOP.format(port=request["port"]))
            break
        except Exception as exc:
            if time.monotonic() > deadline:
                raise SystemExit(f"the desktop's browser does not answer: {exc}") from None
            time.sleep(0.5)
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    cookies = [c for state in request.get("states", []) for c in state.get("cookies", [])]
    if cookies:
        context.add_cookies(cookies)
    pages = list(context.pages)
    failures = []
    for index, url in enumerate(request["urls"]):
        page = pages[index] if index < len(pages) else context.new_page()
        try:
            page.goto(url, timeout=60000)
        except Exception as exc:
            failures.append(f"{url}: {str(exc).splitlines()[0]}")
    first = pages[0] if pages else context.pages[0]
    first.bring_to_front()
    return {"opened": len(request["urls"]), "failures": failures, "url": first.url}


def play(page, action):
    kind, value = action
    if kind == "goto":
        try:  # a URL built from the agent's end page may not load: a verdict, not a failure
            page.goto(value, timeout=60000)
        except Exception as exc:
            return {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
        page.wait_for_timeout(SETTLE_MS)
        return None
    if kind == "content":
        return page.content()
    if kind == "evaluate":
        try:
            return {"value": page.evaluate(value)}
        except Exception as exc:
            return {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    raise SystemExit(f"unknown action {kind!r}")


def observe(playwright, request):
    browser = launch(playwright)
    try:
        context = browser.new_context(storage_state={"cookies": request.get("cookies", [])})
        page = context.new_page()
        values = [play(page, action) for action in request["actions"]]
        return {"values": values, "url": page.url, "uid": os.getuid()}
    finally:
        browser.close()


def shop_api(playwright, request):
    """WebArena's shop REST helpers' two calls: an admin token, then one GET with it."""
    body = json.dumps({"username": request["username"], "password": request["password"]})
    token_request = urllib.request.Request(
        request["base"] + "/rest/default/V1/integration/admin/token",
        data=body.encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(token_request, timeout=60) as answer:
        token = json.load(answer)
    url = request["base"] + request["path"]
    if request.get("params"):
        url += "?" + urllib.parse.urlencode(request["params"])
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=60
        ) as got:
            return {"status": got.status, "json": json.load(got)}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "json": None}


def main():
    request = json.loads(sys.argv[1])
    operations = {"login": login, "start": start, "observe": observe, "shop_api": shop_api}
    if request.get("op") not in operations:
        raise SystemExit(f"unknown operation {request.get('op')!r}")
    with sync_playwright() as playwright:
        result = operations[request["op"]](playwright, request)
    sys.stdout.write("\n" + json.dumps(result, default=str) + "\n")


if __name__ == "__main__":
    try:
        main()
    except SystemExit as stop:
        if not isinstance(stop.code, str):
            raise
        print(stop.code)
        raise SystemExit(1) from None
