"""`--andor-grain op`: an action node is ONE operation, as in StructuredAgent (§3, "action nodes
are atomic browser operations").

The node's model request offers the operation tools (the browser's navigate, read_dom, click,
fill, select and run_js when the run has the web specialist; the screen's `computer` when it has
the GUI one; bash and python for files) and the harness runs exactly one call: a second call in
the same reply is not run. The operation's result is the node's report, which the observation
summarizer and the completion check read. The browser is one session for the whole tree, so a
page opened by one node is the page the next node reads.
"""

from __future__ import annotations

import inspect

from harness.kernel.core import BudgetExceeded, ToolError, ToolResult, ToolSpec
from harness.kernel.loop import LoopConfig, ToolLoop
from harness.tools import BashTool, PythonTool
from subagents import ComputerTool, Desktop, available_specialists
from subagents.web import Browser, web_tools

from ..jsonask import prompt
from .actions import RUN_ENDING, ask_user_note, seed_text

NOT_RUN = "Not run: an action node is one operation; this reply's first call was the operation."


class OneOperation:
    """Wraps an operation tool so that only the first call of a node runs."""

    def __init__(self, inner, budget: list[int]):
        self.inner = inner
        self.name = inner.name
        self.budget = budget

    def spec(self) -> ToolSpec:
        return self.inner.spec()

    def __call__(self, **params) -> ToolResult:
        try:
            inspect.signature(self.inner.__call__).bind(**params)
        except TypeError as exc:
            raise ToolError(f"Bad arguments for {self.name}: {exc}.") from None
        if self.budget[0] <= 0:
            return ToolResult(error=NOT_RUN)
        self.budget[0] -= 1
        return self.inner(**params)


class OpRunner:
    """Runs action nodes one operation each; returns (ran, report) per node."""

    def __init__(self, context):
        self.context = context
        sandbox = context.sandbox
        specialists = available_specialists(context.config)
        self.tools: list = [BashTool(sandbox, session="andor"), PythonTool(sandbox)]
        if "web" in specialists:
            self.tools += web_tools(Browser(sandbox))
        if "gui" in specialists:
            size = tuple(context.config.sandbox.display_size)
            desktop = Desktop(sandbox, size)
            self.tools.append(ComputerTool(desktop, context.model.name, context.stats))
        self.tools += context.extra_tools  # asking the user (ask_user) is one operation too

    def worker_tools(self) -> list:
        """What a resumed run replays: the state-changing operations."""
        return self.tools[:2]

    def run(self, node, instruction: str, done: str) -> tuple[bool, str]:
        budget = [1]
        loop = ToolLoop(
            self.context.model,
            [OneOperation(tool, budget) for tool in self.tools],
            prompt("andor_op.md") + ask_user_note(self.context),
            agent=f"andor-{node.id}",
            config=LoopConfig(
                max_turns=1,
                max_cost_usd=self.context.config.loop.max_cost_usd,
                max_wall_s=self.context.config.loop.max_wall_s,
            ),
            scope=self.context,
        )
        end = loop.run(seed_text(instruction, done, node.goal))
        if isinstance(end, BudgetExceeded) and end.status in RUN_ENDING:
            raise end
        calls = [b for b in loop.messages[1].get("content", []) if b.get("type") == "tool_use"]
        if not calls:
            return False, "no operation was chosen for this node"
        results = [b for b in loop.messages[-1]["content"] if b.get("type") == "tool_result"]
        first, shown = results[0], calls[0]
        text = "\n".join(c.get("text", "") for c in first["content"] if c.get("type") == "text")
        operation = f"{shown['name']} {shown.get('input')}"
        if first.get("is_error"):
            return False, f"the operation {operation} failed: {text}"
        return True, f"operation {operation}:\n{text}"
