"""The browser driver: runs INSIDE the sandbox, in its own process (see ../driver_process.py).

Debian's Chromium driven by Playwright's sync API, launched on first use and kept for the
session; when the desktop's google-chrome serves CDP on loopback, its tab on screen is used
instead. `read_dom` tags the visible interactive elements with `data-sa-id="eN"` (kept across
reads of the same page, so handles stay stable) and turns the visible page into markdown with
markdownify.
"""

import json
import re

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ACTION_TIMEOUT_MS = 5000
NAVIGATION_TIMEOUT_MS = 30000
SETTLE_TIMEOUT_MS = 1500
MAX_MARKDOWN = 40000
MAX_JS_RESULT = 20000
HANDLE = re.compile(r"^e\d+$")
DESKTOP_CDP_PORTS = (9222, 1337)  # the desktop's google-chrome: OSWorld's socat port, then Chrome's
_browser = {}


class Refusal(Exception):
    """Bad input the model can fix; reported as a plain sentence."""


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


describe = _first_line  # Playwright errors go back as their first line


def _playwright():
    from playwright.sync_api import sync_playwright

    if "playwright" not in _browser:
        _browser["playwright"] = sync_playwright().start()
    return _browser["playwright"]


def _desktop_cdp():
    """The DevTools URL of the desktop's google-chrome when it runs with remote debugging."""
    import urllib.request

    for port in DESKTOP_CDP_PORTS:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1):
                return f"http://127.0.0.1:{port}"
        except (OSError, ValueError):
            continue
    return None


def _desktop_page():
    """The tab on screen in the desktop's browser: same profile and tabs the task checker reads."""
    import urllib.request

    url = _desktop_cdp()
    if url is None:
        return None
    browser = _browser.get("desktop")
    if browser is None or not browser.is_connected():
        browser = _browser["desktop"] = _playwright().chromium.connect_over_cdp(url)
    with urllib.request.urlopen(url + "/json/list", timeout=5) as answer:  # most recent first
        order = [t["id"] for t in json.load(answer) if t.get("type") == "page"]
    pages = {}
    for page in [page for context in browser.contexts for page in context.pages]:
        session = page.context.new_cdp_session(page)
        pages[session.send("Target.getTargetInfo")["targetInfo"]["targetId"]] = page
        session.detach()
    shown = [pages[target] for target in order if target in pages]
    page = shown[0] if shown else browser.contexts[0].new_page()
    page.set_default_timeout(ACTION_TIMEOUT_MS)
    page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    return page


def _page():
    desktop = _desktop_page()
    if desktop is not None:
        return desktop
    page = _browser.get("page")
    if page is not None and not page.is_closed():
        return page
    _playwright()
    browser = _browser.get("browser")
    if browser is None or not browser.is_connected():
        browser = _browser["browser"] = _browser["playwright"].chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = _browser["page"] = context.new_page()
    page.set_default_timeout(ACTION_TIMEOUT_MS)
    page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    return page


def _settle(page):
    """Wait for the load, then briefly for the network to go quiet (capped: pages may poll
    forever)."""
    for state in ("load", "networkidle"):
        try:
            page.wait_for_load_state(state, timeout=SETTLE_TIMEOUT_MS)
        except Exception:  # noqa: BLE001 - a page that never idles is still usable
            pass


def _where(page):
    return {"url": page.url, "title": page.title()}


def _locator(selector):
    if not isinstance(selector, str) or not selector.strip():
        raise Refusal('give a CSS selector, e.g. [data-sa-id="e3"] or #save.')
    selector = selector.strip()
    if HANDLE.match(selector):  # a bare handle from read_dom
        selector = f'[data-sa-id="{selector}"]'
    page = _page()
    locator = page.locator(selector)
    try:
        count = locator.count()
    except Exception as exc:  # noqa: BLE001 - an invalid selector
        raise Refusal(f"invalid selector {selector!r}: {_first_line(exc)}") from None
    if count == 0:
        raise Refusal(
            f"the selector {selector!r} matches nothing on {page.url}; call read_dom "
            "for current handles."
        )
    note = f" ({count} elements matched; used the first)" if count > 1 else ""
    return page, locator.first, note


# -- commands --------------------------------------------------------------------------------------
def navigate(url):
    if not isinstance(url, str) or not url.strip():
        raise Refusal("give a URL, e.g. http://127.0.0.1:8000/ or file:///home/user/page.html.")
    url = url.strip()
    if "://" not in url and not url.startswith(("about:", "data:")):
        url = "http://" + url
    page = _page()
    for attempt in range(2):
        try:
            response = page.goto(url, wait_until="domcontentloaded")
            break
        except Exception as exc:  # noqa: BLE001
            # A failed navigation commits Chromium's error page a moment later; a goto issued
            # meanwhile is "interrupted by another navigation", so wait for it and try once more.
            _settle(page)
            if attempt or "interrupted by another navigation" not in str(exc):
                raise Refusal(f"navigation to {url} failed: {_first_line(exc)}") from None
    _settle(page)
    result = _where(page)
    if response is not None:
        result["status"] = response.status
    return result


def read_dom():
    page = _page()
    html = page.evaluate(SERIALIZE_JS)
    from markdownify import markdownify

    markdown = markdownify(
        html, heading_style="ATX", strip=["img"], escape_underscores=False, escape_asterisks=False
    )
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    truncated = len(markdown) > MAX_MARKDOWN
    if truncated:
        markdown = (
            markdown[:MAX_MARKDOWN]
            + f"\n\n[... {len(markdown) - MAX_MARKDOWN} more characters cut]"
        )
    return {**_where(page), "markdown": markdown}


def run_js(code):
    if not isinstance(code, str) or not code.strip():
        raise Refusal(
            "give JavaScript to run: an expression, a function, or statements with `return`."
        )
    page = _page()
    try:
        value = page.evaluate(code)
    except Exception as exc:  # noqa: BLE001
        message = _first_line(exc)
        if "SyntaxError" not in message:
            raise Refusal(f"the script threw: {message}") from None
        try:  # statements with `return`: run them as a function body
            value = page.evaluate(f"async () => {{\n{code}\n}}")
        except Exception as inner:  # noqa: BLE001
            raise Refusal(f"the script threw: {_first_line(inner)}") from None
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_JS_RESULT:
        text = text[:MAX_JS_RESULT] + f" [... {len(text) - MAX_JS_RESULT} more characters cut]"
    return {**_where(page), "value": text}


def click(selector):
    page, element, note = _locator(selector)
    try:
        element.click()
    except Exception as exc:  # noqa: BLE001
        raise Refusal(f"could not click {selector!r}: {_first_line(exc)}") from None
    _settle(page)
    return {**_where(page), "note": note}


def fill(selector, text):
    if not isinstance(text, str):
        raise Refusal("`text` must be a string.")
    page, element, note = _locator(selector)
    try:
        element.fill(text)
    except Exception as exc:  # noqa: BLE001
        raise Refusal(f"could not fill {selector!r}: {_first_line(exc)}") from None
    return {**_where(page), "note": note}


def select(selector, value):
    if not isinstance(value, str):
        raise Refusal("`value` must be a string (an option's value or its label).")
    page, element, note = _locator(selector)
    try:
        options = element.evaluate(
            "el => Array.from(el.options || []).map(o => [o.value, o.label || o.text])"
        )
    except Exception as exc:  # noqa: BLE001
        raise Refusal(f"could not read the options of {selector!r}: {_first_line(exc)}") from None
    wanted = value.strip()
    match = next((v for v, label in options if wanted in (v, label.strip())), None)
    if match is None:
        listed = (
            ", ".join(f"{label!r} (value {v!r})" for v, label in options[:30])
            or "none: not a <select>"
        )
        raise Refusal(f"{selector!r} has no option {value!r}; its options are: {listed}.")
    try:
        chosen = element.select_option(value=match)
    except Exception as exc:  # noqa: BLE001
        raise Refusal(f"could not select {value!r} in {selector!r}: {_first_line(exc)}") from None
    _settle(page)
    return {**_where(page), "note": note, "selected": chosen}


FUNCTIONS = {
    "navigate": navigate,
    "read_dom": read_dom,
    "run_js": run_js,
    "click": click,
    "fill": fill,
    "select": select,
}

# Serializes the visible DOM to simple HTML for markdownify. Interactive elements become one line
# `[eN] role "name"` (their handle is the data-sa-id attribute); hidden elements are left out.
SERIALIZE_JS = r"""
() => {
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME",
                        "HEAD", "META", "LINK"]);
  const KEEP = new Set(["H1","H2","H3","H4","H5","H6","P","UL","OL","LI","TABLE","THEAD","TBODY",
                        "TR","TD","TH","PRE","CODE","STRONG","B","EM","I","BLOCKQUOTE","BR","HR",
                        "DL","DT","DD","CAPTION"]);
  const BLOCKS = new Set(["DIV","SECTION","ARTICLE","MAIN","HEADER","FOOTER","NAV","ASIDE","FORM",
                          "FIELDSET","LABEL","LEGEND","FIGURE","FIGCAPTION"]);
  window.__saNext = window.__saNext || 1;
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const squash = (s) => String(s || "").replace(/\s+/g, " ").trim();
  const visible = (el) => {
    if (el.checkVisibility
        && !el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) return false;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return false;
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return false;
    if (el.tagName === "INPUT" && el.type === "hidden") return false;
    return true;
  };
  const interactive = (el) => {
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return "link";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "SELECT") return "select";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "INPUT") {
      const t = (el.type || "text").toLowerCase();
      if (["button", "submit", "reset", "image"].includes(t)) return "button";
      if (t === "checkbox" || t === "radio") return t;
      return "input[" + t + "]";
    }
    const role = el.getAttribute("role");
    const ROLES = ["button","link","checkbox","radio","tab","menuitem","option","switch","textbox",
                   "combobox"];
    if (role && ROLES.includes(role)) return role;
    if (el.isContentEditable && !el.parentElement?.isContentEditable) return "textbox";
    if (el.hasAttribute("onclick")) return "clickable";
    return null;
  };
  const labelOf = (el) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return squash(aria);
    if (el.labels && el.labels.length) return squash(el.labels[0].innerText);
    if (el.tagName === "INPUT" && ["button","submit","reset"].includes(el.type)) {
      return squash(el.value);
    }
    if (el.tagName === "SELECT" || el.tagName === "INPUT" || el.tagName === "TEXTAREA")
      return squash(el.getAttribute("placeholder") || el.getAttribute("title") || el.name || "");
    return squash(el.innerText || el.getAttribute("title") || el.getAttribute("alt") || "");
  };
  const describe = (el, role) => {
    if (!el.dataset.saId) el.dataset.saId = "e" + (window.__saNext++);
    let line = "[" + el.dataset.saId + "] " + role + ' "' + labelOf(el).slice(0, 120) + '"';
    if (el.tagName === "A") line += " -> " + el.getAttribute("href");
    if (el.tagName === "SELECT") {
      const options = Array.from(el.options).map(o => (o.selected ? "*" : "")
        + squash(o.label || o.text) + (o.value !== o.text ? "=" + o.value : ""));
      line += " options: " + options.slice(0, 30).join(" | ");
    } else if (role === "checkbox" || role === "radio") {
      line += el.checked ? " (checked)" : " (unchecked)";
    }
    else if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") {
      line += " value: " + JSON.stringify(el.value);
    }
    if (el.disabled) line += " (disabled)";
    return "<p>" + esc(line) + "</p>";
  };
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return esc(node.textContent);
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const el = node;
    if (SKIP.has(el.tagName.toUpperCase()) || !visible(el)) return "";
    const role = interactive(el);
    if (role) return describe(el, role);
    const children = el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes;
    const inner = Array.from(children).map(walk).join("");
    const tag = el.tagName.toUpperCase();
    if (KEEP.has(tag)) {
      return "<" + tag.toLowerCase() + ">" + inner + "</" + tag.toLowerCase() + ">";
    }
    if (BLOCKS.has(tag)) return "<div>" + inner + "</div>";
    return inner;
  };
  return document.body ? walk(document.body) : "";
}
"""
