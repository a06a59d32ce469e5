"""Runs chrome_cdp.py inside the sandbox with recreation.gov's pages served from files.

Usage: python3 routed_cdp.py FOLDER REQUEST_JSON. Every request of the browser context the
operation uses is answered by Playwright's route: the test pages of FOLDER for recreation.gov's
addresses, an abort for anything else, so no request leaves the browser.
"""

import importlib.util
import sys
from pathlib import Path
from urllib.parse import urlparse

FOLDER = Path(sys.argv.pop(1))
PAGES = {
    "/": "home.html",
    "/search": "search.html",
    "/camping/campgrounds/233123": "campground.html",
}
spec = importlib.util.spec_from_file_location("chrome_cdp", FOLDER / "chrome_cdp.py")
cdp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cdp)
served = []


def answer(route):
    address = urlparse(route.request.url)
    page = PAGES.get(address.path) if address.hostname == "www.recreation.gov" else None
    if page is None:
        route.abort()
        return
    served.append(address.path)
    route.fulfill(body=(FOLDER / page).read_text(), content_type="text/html")


unrouted = cdp.run


def routed(request, browser, url):
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    context.route("**/*", answer)
    result = unrouted(request, browser, url)
    return {**result, "served": served}


cdp.run = routed
cdp.main()
