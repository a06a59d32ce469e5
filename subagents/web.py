"""The web specialist's tools: Chromium inside the sandbox, driven through the DOM.

The browser lives in the toolbox's browser driver (`sandboxes/toolbox/drivers/browser.py`), a
process of its own in the sandbox, so it keeps its pages between calls; each command is one
`browser.*` toolbox call. Every failure (no match for a selector, a failed navigation, a script
that throws) comes back as a `ToolError` with the reason. When the desktop's `google-chrome` runs
with remote debugging (an OSWorld task launched it), the driver attaches to it over CDP and acts on
the tab on screen, so the task's checker sees what it did; otherwise it has a headless Chromium.
"""

from __future__ import annotations

from harness.kernel.core import ToolResult, ToolSpec

COMMAND_TIMEOUT_S = 90.0
SELECTOR_HELP = 'A CSS selector; the handles from read_dom work as [data-sa-id="e3"] (or just e3).'


class Browser:
    """The sandbox's browser session (started on the first command)."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def call(self, command: str, **args) -> dict:
        return self.sandbox.call(f"browser.{command}", timeout=COMMAND_TIMEOUT_S, **args)


def _where(result: dict) -> str:
    return f"{result.get('title') or '(untitled)'} — {result.get('url')}"


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required}


class _BrowserTool:
    """Shared plumbing: one browser, one spec."""

    name = ""
    description = ""
    schema: dict = _object({}, [])

    def __init__(self, browser: Browser):
        self.browser = browser

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, input_schema=self.schema)


class NavigateTool(_BrowserTool):
    name = "navigate"
    description = (
        "Open a URL in the browser and wait for it to load (http://127.0.0.1:PORT/..., "
        "file:///...)."
    )
    schema = _object({"url": {"type": "string"}}, ["url"])

    def __call__(self, url: str) -> ToolResult:
        result = self.browser.call("navigate", url=url)
        status = f" (HTTP {result['status']})" if result.get("status") else ""
        return ToolResult(output=f"Loaded {_where(result)}{status}. Call read_dom to see it.")


class ReadDomTool(_BrowserTool):
    name = "read_dom"
    description = (
        "The current page as markdown: visible text, tables and links; each interactive element is "
        "a "
        'line `[eN] role "name"` whose handle works as the CSS selector [data-sa-id="eN"]. Handles '
        "stay valid on this page until it navigates."
    )

    def __call__(self) -> ToolResult:
        result = self.browser.call("read_dom")
        return ToolResult(
            output=f"# {_where(result)}\n\n{result['markdown'] or '(the page shows no text)'}"
        )


class RunJsTool(_BrowserTool):
    name = "run_js"
    description = (
        "Run JavaScript in the page and return its JSON result: an expression (`document.title`), "
        "a function (`() => ...`), or statements ending with `return value`."
    )
    schema = _object({"code": {"type": "string"}}, ["code"])

    def __call__(self, code: str) -> ToolResult:
        return ToolResult(output=self.browser.call("run_js", code=code)["value"])


class ClickTool(_BrowserTool):
    name = "click"
    description = "Click the element a selector matches, then wait for the page to settle."
    schema = _object({"selector": {"type": "string", "description": SELECTOR_HELP}}, ["selector"])

    def __call__(self, selector: str) -> ToolResult:
        result = self.browser.call("click", selector=selector)
        return ToolResult(output=f"Clicked {selector}{result['note']}; now at {_where(result)}.")


class FillTool(_BrowserTool):
    name = "fill"
    description = "Replace the value of an input, textarea or editable element with `text`."
    schema = _object(
        {"selector": {"type": "string", "description": SELECTOR_HELP}, "text": {"type": "string"}},
        ["selector", "text"],
    )

    def __call__(self, selector: str, text: str) -> ToolResult:
        result = self.browser.call("fill", selector=selector, text=text)
        return ToolResult(output=f"Filled {selector}{result['note']}.")


class SelectTool(_BrowserTool):
    name = "select"
    description = "Choose an option of a <select> by its value or its visible label."
    schema = _object(
        {"selector": {"type": "string", "description": SELECTOR_HELP}, "value": {"type": "string"}},
        ["selector", "value"],
    )

    def __call__(self, selector: str, value: str) -> ToolResult:
        result = self.browser.call("select", selector=selector, value=value)
        return ToolResult(output=f"Selected {result['selected']} in {selector}{result['note']}.")


def web_tools(browser: Browser) -> list:
    """The web specialist's browser tools (without `report`)."""
    return [
        tool(browser)
        for tool in (NavigateTool, ReadDomTool, RunJsTool, ClickTool, FillTool, SelectTool)
    ]
