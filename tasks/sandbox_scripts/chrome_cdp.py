"""Runs INSIDE the sandbox: one Chrome operation over the DevTools protocol, printed as JSON.

Usage: python3 chrome_cdp.py '{"op": "...", ...}'. The desktop's `google-chrome` serves the
protocol on the port its launch command names (OSWorld: 1337, forwarded to 9222 by socat); the
ports are tried in order, waiting up to `wait_s` for the browser to come up. Playwright is the
desktop image's; nothing here is sent anywhere but 127.0.0.1.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import unquote, urlparse

from playwright.sync_api import sync_playwright

CHROME_BINARIES = {"/usr/lib/chromium/chrome", "/usr/lib/chromium/chromium"}
"""What `google-chrome` runs in the desktop image: Debian's Chromium under Chrome's name (a hard
link, so its processes are `chrome` as on OSWorld's VM), or Debian's own `chromium`."""


def port_holders():
    """{port: program} of the TCP ports listening here, from /proc. Which program holds a port
    cannot be faked the way an answer can: an agent that quit Chrome and served a DevTools
    endpoint of its own (or a socat to one) on 9222 would otherwise be believed."""
    sockets = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cells = row.split()
            if len(cells) > 9 and cells[3] == "0A":  # LISTEN
                sockets[f"socket:[{cells[9]}]"] = int(cells[1].rsplit(":", 1)[1], 16)
    holders = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds}
            program = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        for link in links & sockets.keys():
            holders[sockets[link]] = program
    return holders


def chrome_ports(ports):
    """The ports Chromium itself listens on, those of `ports` first (socat's 9222 forwards to
    Chrome's own 1337, so the browser is reached on the port it holds)."""
    held = [port for port, program in port_holders().items() if program in CHROME_BINARIES]
    return sorted(held, key=lambda port: ports.index(port) if port in ports else len(ports))


def endpoint(ports, wait_s):
    deadline = time.monotonic() + wait_s
    while True:
        for port in chrome_ports(ports):
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
                + " (nor on another port Chromium holds); the task must launch google-chrome "
                "with --remote-debugging-port"
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


def tab_at(browser, url, settle_ms):
    """OSWorld's active_tab_html_parse match: the page whose URL, percent-decoded and without a
    trailing slash, is `url` (each page first gets up to `settle_ms` to go network-idle)."""

    def norm(text):
        return unquote(text).rstrip("/")

    for page in pages(browser):
        try:
            page.wait_for_load_state("networkidle", timeout=settle_ms)
        except Exception:  # a page that keeps polling is read as it is
            pass
        if not page.is_closed() and norm(page.url) == norm(url):
            return page
    return None


def stripped(text):
    return text.strip() if text else ""


def first_text(page, selector, read, wait_ms):
    """`read` of the first element `selector` finds: None when it finds none, "" on an error."""
    try:
        found = page.locator(selector)
        if found.count() == 0:
            return None
        return stripped(read(found.first, wait_ms))
    except Exception:
        return ""


DIRECT_TEXTS = """(node) => Array.from(node.childNodes)
    .filter(n => n.nodeType === Node.TEXT_NODE)
    .map(n => n.textContent.trim()).filter(Boolean)"""


def child_texts(element, child):
    found = element.query_selector(child)
    return (
        None
        if found is None
        else stripped(found.inner_text() if child == "span" else found.text_content())
    )


def answer(page, kind, selector, wait_ms):
    """One generic page read of tasks/html_parse.py; a failing read answers as nothing found."""
    try:
        if kind == "texts":
            return [stripped(e.text_content()) for e in page.query_selector_all(selector)]
        if kind == "direct_texts":
            found = page.query_selector_all(selector)
            return found[0].evaluate(DIRECT_TEXTS) if found else []
        if kind in ("h3_texts", "li_spans"):
            child, scope = ("h3", "") if kind == "h3_texts" else ("span", " li.catAllProducts")
            texts = [child_texts(e, child) for e in page.query_selector_all(selector + scope)]
            return [text for text in texts if text is not None]
    except Exception:
        return []
    if kind == "label":
        value = first_text(
            page, f"text={selector}", lambda e, ms: e.text_content(timeout=ms), wait_ms
        )
        return value or ""
    if kind == "input":
        value = first_text(
            page, f"xpath={selector}", lambda e, ms: e.input_value(timeout=ms), wait_ms
        )
        return value or ""
    if kind == "xpath":
        read = lambda e, ms: e.text_content(timeout=ms)  # noqa: E731
        value = first_text(page, f"xpath={selector}", read, wait_ms)
        if value is None:  # none found: OSWorld tries the bare selector too
            value = first_text(page, selector, read, wait_ms)
        return value or ""
    raise SystemExit(f"unknown page query {kind!r}")


def website_infos(page, request, timeout_ms):
    """OSWorld's info_from_website: each info read on `url` (reloaded when a click left it)."""
    infos = []
    for info in request["infos"]:
        if page.url != request["url"]:
            page.goto(request["url"], timeout=timeout_ms)
            page.wait_for_load_state("load")
        action, selector = info.get("action", "inner_text"), info.get("selector")
        if action in ("inner_text", "attribute"):
            selector = [selector]
        elif action not in ("click_and_inner_text", "click_and_attribute"):
            raise SystemExit(f"the action {action} is not supported")
        for step in selector[:-1]:
            page.wait_for_selector(step, state="attached", timeout=10000).click()
            page.wait_for_load_state("load")
        last = page.wait_for_selector(selector[-1], state="attached", timeout=10000)
        if action.endswith("inner_text"):
            infos.append(last.inner_text())
        else:
            infos.append(last.get_attribute(info["attribute"]))
    return infos


def page_pdf(browser, url, timeout_ms):
    """OSWorld's pdf_from_url: the page printed to PDF once network-idle (3 tries, 5 s apart),
    into a fresh private folder; a two-line placeholder PDF when every try fails."""
    folder = tempfile.mkdtemp(prefix="stateact-pdf-")
    path = f"{folder}/page.pdf"
    for attempt in range(3):
        page = browser.contexts[0].new_page()
        try:
            page.set_default_timeout(timeout_ms)
            page.goto(url, wait_until="networkidle", timeout=timeout_ms)
            page.wait_for_load_state("networkidle", timeout=timeout_ms)
            time.sleep(3)  # OSWorld's wait for the rendering to settle
            page.pdf(path=path)
            return path
        except Exception as exc:
            sys.stderr.write(f"pdf attempt {attempt + 1}: {str(exc).splitlines()[0]}\n")
            if attempt < 2:
                time.sleep(5)
        finally:
            page.close()
    with open(path, "w") as placeholder:
        placeholder.write("%PDF-1.4\n%EOF\n")
    return path


RECREATION_HOMES = (
    "https://www.recreation.gov/",
    "http://www.recreation.gov/",
    "https://recreation.gov/",
)
NEXT_AVAILABLE = (
    "button.next-available",
    "button[class*='next-available']",
    "button[class*='next']",
    ".next-available",
    "[data-testid*='next']",
)
FAILED = "__EVALUATION_FAILED__"


def recreation_home(page, timeout_ms):
    """recreation.gov's home page, trying OSWorld's three address variants in turn."""
    for home in RECREATION_HOMES:
        try:
            page.goto(home, wait_until="domcontentloaded", timeout=timeout_ms)
            return
        except Exception as exc:
            sys.stderr.write(f"{home}: {str(exc).splitlines()[0]}\n")
    raise SystemExit("recreation.gov could not be opened at any of its addresses")


def class_text(page, class_name, order):
    """The stripped text of the `order`-th (else the first) element of the class; OSWorld's
    failure marker when there is none."""
    if order is None:
        found = page.query_selector("." + class_name)
    else:
        elements = page.query_selector_all("." + class_name)
        found = elements[int(order)] if len(elements) > int(order) else None
    if found is None:
        return FAILED
    text = found.text_content()
    return text.strip() if text else text


def recreation(browser, request, timeout_ms):
    """OSWorld's gotoRecreationPage_and_get_html_content: search recreation.gov for `search`,
    open the first highlighted result (a new tab), press its Next Available button when there is
    one, and read the class's text there. OSWorld's fixed sleeps (10 s, 30 s) are waits for
    the URL, the result and the new tab's load here."""
    context = browser.contexts[0] if browser.contexts else browser.new_context()
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    opened = [page]
    try:
        recreation_home(page, timeout_ms)
        try:
            page.wait_for_load_state("networkidle", timeout=min(timeout_ms, 30000))
        except Exception:  # a page that keeps polling is used as it is
            pass
        page.wait_for_selector("input#hero-search-input", state="visible")
        page.fill("input#hero-search-input", request["search"])
        page.wait_for_selector("button.nav-search-button", state="visible")
        page.click("button.nav-search-button")
        page.wait_for_url(re.compile(r"recreation\.gov/search"), timeout=min(timeout_ms, 20000))
        page.wait_for_load_state("domcontentloaded")
        result = ".search-result-highlight--success"
        try:
            page.wait_for_selector(result, state="visible", timeout=min(timeout_ms, 25000))
        except Exception:  # OSWorld scrolls an attached but hidden result into view
            page.wait_for_selector(result, state="attached", timeout=min(timeout_ms, 25000))
            page.locator(result).first.scroll_into_view_if_needed()
        with page.expect_popup() as popup:
            page.click(result)
        found = popup.value
        opened.append(found)
        found.set_default_timeout(timeout_ms)
        found.wait_for_load_state("load", timeout=min(timeout_ms, 20000))
        try:  # OSWorld goes on without the button when none of its selectors finds one
            found.wait_for_selector(", ".join(NEXT_AVAILABLE), state="visible", timeout=30000)
            button = next(s for s in NEXT_AVAILABLE if found.locator(s).count())
            found.click(button, timeout=30000)
        except Exception as exc:
            sys.stderr.write(f"no Next Available button: {str(exc).splitlines()[0]}\n")
        try:
            text = class_text(found, request["class"], request.get("order"))
        except Exception:
            text = FAILED
        return {"expected": {request["class"]: text}, "url": found.url}
    finally:
        for tab in opened:
            tab.close()


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
    if op == "html_parse":
        page = tab_at(browser, request["url"], int(request.get("settle_s", 10) * 1000))
        if page is None:
            return None
        wait_ms = int(request.get("read_s", 5) * 1000)
        answers = [answer(page, kind, selector, wait_ms) for kind, selector in request["queries"]]
        return {"url": page.url, "answers": answers}
    if op == "website_info":
        page = browser.contexts[0].new_page()
        try:
            page.goto(request["url"], timeout=timeout_ms)
            page.wait_for_load_state("load")
            return website_infos(page, request, timeout_ms)
        finally:
            page.close()
    if op == "evaluate":  # a fresh tab at `url`, `settle_s` to render, then `js` on it
        page = browser.contexts[0].new_page()
        try:
            page.goto(request["url"], wait_until="domcontentloaded", timeout=timeout_ms)
            page.wait_for_timeout(int(request.get("settle_s", 2.5) * 1000))
            return {"value": page.evaluate(request["js"])}
        finally:
            page.close()
    if op == "pdf":
        return {"path": page_pdf(browser, request["url"], timeout_ms)}
    if op == "recreation":
        return recreation(browser, request, timeout_ms)
    raise SystemExit(f"unknown operation {op!r}")


def start_chrome():
    """OSWorld's getters start Chrome themselves when none answers (the agent may have closed
    it): `google-chrome --remote-debugging-port=1337`, detached, on the desktop's display."""
    subprocess.Popen(
        ["google-chrome", "--remote-debugging-port=1337"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def main():
    request = json.loads(sys.argv[1])
    ports, wait_s = request.get("ports", [9222, 1337]), float(request.get("wait_s", 15))
    try:
        url = endpoint(ports, wait_s)
    except SystemExit:
        if not request.get("start_chrome"):
            raise
        start_chrome()
        url = endpoint(ports, 30)
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(url)
        result = run(request, browser, url)
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    try:
        main()
    except SystemExit as stop:
        if not isinstance(stop.code, str):
            raise
        print(stop.code)  # on stdout too: a getter's command keeps only stdout
        raise SystemExit(1) from None
