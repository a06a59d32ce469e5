"""`--gate-mode paper`: the paper's finish gate, a single prompt-level check on the live machine.

A fresh model context holds only the verbatim instruction and tools on the machine as the agent
left it (nothing frozen, so running programs, open browser tabs and local servers are still
there): a shell in the observer flavour, the editor's `view`, the open browser's DOM and a
screenshot. Its `verdict` alone decides the round; the bounded correction (three rounds by default)
is the `FinishGate`'s. The model-free structural layer runs on the same state before the model but
only annotates the round (`structural_annotation`: the checks it would have failed), so an audit
can tell a false pass a structural check would have caught from a wrong value. What the round
itself changed on the machine is listed (`changed_during_round`): the shell is told to only look,
and this shows whether it did.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from pathlib import Path

from harness.kernel.core import BudgetExceeded, StateActError, ToolError, ToolResult, ToolSpec
from harness.kernel.loop import LoopConfig, ToolLoop
from harness.tools import BashTool, EditorTool

from .gate import Gate, VerdictTool
from .structural import check_deliverables
from .verdict import Verdict, rejected, undecided

log = logging.getLogger(__name__)

PROMPT = (Path(__file__).parent / "prompts" / "gate_paper.md").read_text()
SCREENSHOT_WIDTH = 1280  # the gate glances at the screen; larger screens are shown scaled down
QUERY_SCRIPT = (
    "Array.from(document.querySelectorAll({selector})).slice(0, 50)"
    ".map(e => e.outerHTML.length > 2000 ? e.outerHTML.slice(0, 2000) + '…' : e.outerHTML)"
)


class ObserverCalls:
    """The live sandbox as the gate's shell sees it: every bash/python session is an observer's
    (no agent-written rc file, PATH entry or Python module steers it)."""

    def __init__(self, sandbox):
        self._sandbox = sandbox

    def call(self, method: str, **params):
        if method.startswith(("bash.", "python.")):
            params["observer"] = True
        return self._sandbox.call(method, **params)

    def __getattr__(self, name):
        return getattr(self._sandbox, name)


class LiveLookTool:
    """`read_dom()`, `query_selector(selector)` or `screenshot()` on the live machine."""

    def __init__(self, sandbox, name: str, display_size: tuple[int, int]):
        self.sandbox = sandbox
        self.name = name
        self.display_size = display_size

    def spec(self) -> ToolSpec:
        descriptions = {
            "read_dom": "The open browser page as markdown, with its URL and title.",
            "query_selector": "The outer HTML of the open page's elements matching a CSS selector.",
            "screenshot": "A screenshot of the machine's screen as it is now.",
        }
        properties = {"selector": {"type": "string"}} if self.name == "query_selector" else {}
        return ToolSpec(
            name=self.name,
            description=descriptions[self.name],
            input_schema={"type": "object", "properties": properties, "required": list(properties)},
        )

    def __call__(self, selector: str | None = None) -> ToolResult:
        try:
            if self.name == "read_dom":
                page = self.sandbox.call("browser.read_dom", timeout=60.0)
                return ToolResult(
                    output=f"{page.get('url')} — {page.get('title')}\n\n{page.get('markdown', '')}"
                )
            if self.name == "query_selector":
                if not isinstance(selector, str) or not selector.strip():
                    raise ToolError("`selector` must be a CSS selector.")
                code = QUERY_SCRIPT.format(selector=json.dumps(selector))
                found = self.sandbox.call("browser.run_js", code=code, timeout=60.0)
                return ToolResult(output=f"{found.get('url')}\n{found.get('value')}")
            return self._screenshot()
        except StateActError as exc:
            raise ToolError(str(exc)) from None

    def _screenshot(self) -> ToolResult:
        width, height = self.display_size
        factor = min(1.0, SCREENSHOT_WIDTH / width)
        shot = self.sandbox.call(
            "desktop.screenshot",
            timeout=60.0,
            width=max(1, int(width * factor)),
            height=max(1, int(height * factor)),
        )
        return ToolResult(image_png=base64.b64decode(shot["png_b64"]))


class PaperGate(Gate):
    """The paper's gate: the model's verdict on the live machine decides; structure annotates."""

    def judge(self, label: str = "gate") -> Verdict:
        round_started = time.time()
        try:
            observed = self.observe()
            report = check_deliverables(
                self.sandbox,
                self.instruction,
                self.initially_present,
                observed["changed_paths"],
                observed["open_documents"],
            )
        except StateActError as exc:
            log.warning("paper gate round could not inspect the state: %s", exc)
            return undecided(f"the gate could not inspect the state: {exc}")
        evidence = {
            "gate_mode": "paper",
            "structural_annotation": {
                "would_reject": report.definite_gaps,
                "findings": [vars(f) for f in report.findings],
            },
            "changed_paths": observed["changed_paths"],
            "open_documents": observed["open_documents"].to_json(),
        }
        if self.model is None:
            return undecided("the paper gate needs a model (no gate model given)", evidence)
        verdict = self._ask(label, evidence)
        try:
            after = self.sandbox.call("fs.changed", since=round_started)["paths"]
            verdict.evidence["changed_during_round"] = [entry["path"] for entry in after]
        except StateActError as exc:
            verdict.evidence["changed_during_round"] = f"not listed: {exc}"
        return verdict

    def _ask(self, label: str, evidence: dict) -> Verdict:
        verdict_tool = VerdictTool()
        live = ObserverCalls(self.sandbox)
        display = tuple(getattr(self.sandbox.config, "display_size", (1280, 720)))
        tools = [
            BashTool(live, session="paper-gate"),
            EditorTool(live, commands=("view",)),
            *(LiveLookTool(live, name, display) for name in ("read_dom", "query_selector")),
            LiveLookTool(live, "screenshot", display),
            verdict_tool,
        ]
        loop = ToolLoop(
            self.model,
            tools,
            PROMPT,
            agent=label,
            config=LoopConfig(max_turns=self.max_turns),
            scope=self.scope,
        )
        try:
            end = loop.run(f"<instruction>\n{self.instruction}\n</instruction>")
        except StateActError as exc:
            end = BudgetExceeded("gate_error", str(exc))
        evidence["transcript"] = loop.messages
        if verdict_tool.given is None:
            return undecided(f"the gate gave no verdict ({end.message})", evidence)
        passed, gaps = verdict_tool.given
        return Verdict(True, (), evidence) if passed else rejected(gaps, "model", evidence)
