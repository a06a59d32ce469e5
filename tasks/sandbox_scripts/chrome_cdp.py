"""Runs INSIDE the sandbox: one Chrome operation over the DevTools protocol, printed as JSON.

Usage: python3 chrome_cdp.py '{"op": "...", ...}'. The desktop's `google-chrome` serves the
protocol on the port its launch command names (OSWorld: 1337, forwarded to 9222 by socat); the
ports are tried in order, waiting up to `wait_s` for the browser to come up. Playwright is the
desktop image's; nothing here is sent anywhere but 127.0.0.1.
"""

import json
import sys
import time
import urllib.request
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright


def endpoint(ports, wait_s):
    deadline = time.monotonic() + wait_s
    while True:
        for port in ports:
            url = f"http://127.0.0.1:{int(port)}"
            try:
                with urllib.request.urlopen(url + "/json/version", timeout=2) as answer:
                    json.load(answer)
                return url
            except (OSError, ValueError):
                continue
        if time.monotonic() > deadline:
            raise SystemExit(
                "no Chrome answers on 127.0.0.1 port "
                + " or ".join(str(p) for p in ports)
                + "; the task must launch google-chrome with --remote-debugging-port"
            )
        time.sleep(0.5)


def same_url(a, b):
    """OSWorld's loose URL match: scheme, `www.` and a trailing slash do not count."""

    def norm(url):
        parts = urlparse(url if "://" in url else "http://" + url)
        host = parts.netloc.lower().removeprefix("www.")
        return host + parts.path.rstrip("/") + ("?" + parts.query if parts.query else "")

    return norm(a) == norm(b)


def pages(browser):
    return [page for context in browser.contexts for page in context.pages]


def active_page(browser, url):
    """The tab on screen: Chrome lists its page targets most recently shown first."""
    with urllib.request.urlopen(url + "/json/list", timeout=5) as answer:
        order = [t["id"] for t in json.load(answer) if t.get("type") == "page"]
    by_id = {}
    for page in pages(browser):
        session = page.context.new_cdp_session(page)
        try:
            by_id[session.send("Target.getTargetInfo")["targetInfo"]["targetId"]] = page
        finally:
            session.detach()
    return next((by_id[i] for i in order if i in by_id), None)


def page_record(page, content):
    record = {"title": page.title(), "url": page.url}
    if content:
        record["content"] = page.content()
    return record


def run(request, browser, url):
    op = request["op"]
    timeout_ms = int(request.get("timeout_s", 60) * 1000)
    if op == "open_tabs":
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        failures = []
        for url in request["urls"]:
            page = context.new_page()
            try:
                page.goto(url, timeout=timeout_ms)
            except Exception as exc:  # OSWorld keeps going when one page fails to load
                failures.append(f"{url}: {str(exc).splitlines()[0]}")
        return {"opened": len(request["urls"]), "failures": failures}
    if op == "close_tabs":
        closed = 0
        for url in request["urls"]:
            for page in pages(browser):
                if same_url(page.url, url):
                    page.close()
                    closed += 1
                    break
        return {"closed": closed}
    if op == "tabs":
        return [page_record(page, False) for page in pages(browser)]
    if op == "active":
        page = active_page(browser, url)
        return page_record(page, True) if page else None
    if op == "page_info":
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        page = context.new_page()
        try:
            page.goto(request["url"], timeout=timeout_ms)
            return page_record(page, True)
        finally:
            page.close()
    raise SystemExit(f"unknown operation {op!r}")


def main():
    request = json.loads(sys.argv[1])
    url = endpoint(request.get("ports", [9222, 1337]), float(request.get("wait_s", 15)))
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(url)
        result = run(request, browser, url)
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
