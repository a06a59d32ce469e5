"""`delegate(agent, task, facts?)`: run a specialist in a fresh context and return only its report.

The specialist starts with nothing but the subtask and the facts the caller passes, runs its own
`ToolLoop` (named `worker-1`, `gui-2`, ... so the trajectory keeps agents apart) until it calls
`report(text)` or hits its turn cap, and shares the run's `RunStats` so its cost counts. Its
transcript never enters the caller's context.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from gates import build_subtask_review
from harness.kernel.core import (
    BudgetExceeded,
    Finished,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from harness.kernel.loop import LoopConfig, NoteHook, ToolLoop
from harness.run.context import RunContext
from harness.tools import Plan

from .desktop import Desktop
from .gui import ComputerTool
from .web import Browser, web_tools
from .worker import plan_note, worker_tools

SPECIALISTS = ("worker", "gui", "web")
PROMPTS = Path(__file__).parent / "prompts"
LAST_TEXT_CHARS = 2000
DESCRIPTIONS = {
    "worker": "a fresh-context copy of your code tools for a long exploration or a "
    "self-contained part",
    "gui": "sees the screen and uses mouse and keyboard, for irreducibly visual subgoals",
    "web": "drives a browser through the DOM (navigate, read_dom, run_js, click, fill, select)",
}


class ReportTool:
    """`report(text)`: ends a specialist; with a `review` (the nested gate) only once it is
    accepted."""

    ends_loop = True  # the tool loop names it when the model answers without a call

    name = "report"

    def __init__(self, review=None):
        self.review = review

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "End your work and hand your report to the agent that delegated to you: what you "
                "did, the state you left (paths, values, what is on screen), and anything that "
                "failed or is unverified. Only this text goes back, so put every fact it needs in "
                "it."
            ),
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The report."}},
                "required": ["text"],
            },
        )

    def __call__(self, text: str) -> ToolResult:
        if not isinstance(text, str) or not text.strip():
            raise ToolError("`text` must hold your report (what was done, the resulting state).")
        rejection = self.review(text) if self.review else None
        if rejection is not None:
            return ToolResult(error=rejection)
        raise Finished("reported", text.strip())


@dataclass
class SharedState:
    """What every delegation of one run shares: the naming counter, the desktop and the browser."""

    sandbox: object
    display_size: tuple[int, int]
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))
    _desktop: Desktop | None = None
    _browser: Browser | None = None

    @property
    def desktop(self) -> Desktop:
        if self._desktop is None:
            self._desktop = Desktop(self.sandbox, self.display_size)
        return self._desktop

    @property
    def browser(self) -> Browser:
        if self._browser is None:
            self._browser = Browser(self.sandbox)
        return self._browser


def available_specialists(config) -> list[str]:
    """The specialists this run offers: the enabled known ones, without `gui` while the main
    agent holds the computer tool itself (`config.main.computer`)."""
    names = [name for name in config.subagents.enabled if name in SPECIALISTS]
    if config.main.computer:
        names = [name for name in names if name != "gui"]
    return names


class DelegateTool:
    """The `delegate` tool of the main agent (or, at `worker_depth=2`, of a worker)."""

    name = "delegate"

    def __init__(
        self, context: RunContext, *, parent: str = "main", allowed: list[str] | None = None
    ):
        """`parent` names the agent that holds the tool; `allowed` narrows the run's
        specialists."""
        self.context = context
        sandbox, config = context.sandbox, context.config
        self.sandbox, self.config, self.record = sandbox, config, context.record
        self.stats, self.model = context.stats, context.model
        self.depth = 1
        self.parent = parent
        available = available_specialists(config)
        self.specialists = [name for name in available if allowed is None or name in allowed]
        self.shared = SharedState(sandbox, tuple(config.sandbox.display_size))

    def for_agent(self, parent: str, allowed: list[str], *, deeper: bool = False) -> DelegateTool:
        """The `delegate` tool of an agent this one's holder started (`deeper`: a worker one level
        down): it shares the run's naming counter, desktop and browser."""
        tool = DelegateTool(self.context, parent=parent, allowed=allowed)
        tool.depth = self.depth + 1 if deeper else self.depth
        tool.shared = self.shared
        return tool

    def spec(self) -> ToolSpec:
        choices = "; ".join(f"`{name}`: {DESCRIPTIONS[name]}" for name in self.specialists)
        return ToolSpec(
            name=self.name,
            description=(
                "Hand a focused subtask to a specialist that starts with a fresh context holding "
                "only `task` and `facts`; you get back its short report, never its "
                f"transcript. {choices}."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "agent": {"type": "string", "enum": list(self.specialists)},
                    "task": {
                        "type": "string",
                        "description": "The subtask: what to do and what to report.",
                    },
                    "facts": {
                        "type": "string",
                        "description": "Facts it needs: paths, values, where things are.",
                    },
                },
                "required": ["agent", "task"],
            },
        )

    def __call__(self, agent: str, task: str, facts: str | None = None) -> ToolResult:
        if agent not in self.specialists:
            offered = ", ".join(self.specialists) or "none in this run"
            raise ToolError(
                f"there is no {agent!r} specialist here; the available ones are: {offered}."
            )
        if not isinstance(task, str) or not task.strip():
            raise ToolError("`task` must describe the subtask for the specialist.")
        self.stats.delegations += 1
        name = f"{agent}-{next(self.shared.counter)}"
        tools, note = self._tools(agent, name, task)
        loop = ToolLoop(
            self.model,
            tools,
            (PROMPTS / f"{agent}.md").read_text(encoding="utf-8"),
            agent=name,
            config=LoopConfig(
                max_turns=self.config.subagents.max_turns,
                max_cost_usd=self.config.loop.max_cost_usd,
                max_wall_s=self.config.loop.max_wall_s,
            ),
            scope=self.context,
            hooks=[NoteHook(note)] if note else [],
        )
        end = loop.run(_seed(task, facts))
        report = _report_text(name, end, loop)
        if self.record:
            self.record.append(
                "delegation",
                agent=self.parent,
                specialist=agent,
                name=name,
                task=task,
                facts=facts,
                report=report,
                turns=loop.turns,
                status=end.status,
            )
        return ToolResult(output=f"Report from {name} ({loop.turns} turns):\n{report}")

    def _tools(self, agent: str, name: str, task: str) -> tuple[list[Tool], object]:
        if agent == "gui":
            return [
                ComputerTool(self.shared.desktop, self.model.name, self.stats),
                ReportTool(),
            ], None
        if agent == "web":
            return [*web_tools(self.shared.browser), ReportTool()], None
        plan = Plan()
        tools = worker_tools(self.sandbox, self.depth, plan)
        if self.depth < self.config.subagents.worker_depth:
            tools.append(self.for_agent(name, ["worker"], deeper=True))
        review = self._nested_review(task) if self.config.subagents.nested_gate else None
        return [*tools, ReportTool(review)], plan_note(plan)

    def _nested_review(self, task: str):
        """The worker's own finish gate (the nested ablation), judging its subtask."""
        return build_subtask_review(self.context, task)


def _seed(task: str, facts: str | None) -> str:
    parts = [f"<subtask>\n{task.strip()}\n</subtask>"]
    if facts and facts.strip():
        parts.append(f"<facts>\n{facts.strip()}\n</facts>")
    parts.append(
        "You start with no other context. Do the subtask, then call `report` with "
        "what you found or did."
    )
    return "\n\n".join(parts)


def _report_text(name: str, end: Finished | BudgetExceeded, loop: ToolLoop) -> str:
    if isinstance(end, Finished) and end.status == "reported":
        return end.message
    last = _last_text(loop.messages)
    stopped = f"[{name} stopped without a report ({end.status}): {end.message}.]"
    return f"{stopped}\nIts last message: {last}" if last else f"{stopped}\nIt wrote no text."


def _last_text(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message["role"] != "assistant":
            continue
        texts = [
            b["text"]
            for b in message["content"]
            if b.get("type") == "text" and b.get("text", "").strip()
        ]
        if texts:
            text = "\n".join(texts).strip()
            return text if len(text) <= LAST_TEXT_CHARS else text[:LAST_TEXT_CHARS] + " [...]"
    return ""
