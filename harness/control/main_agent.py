"""The main agent: StateAct's code-first action space around the shared tool loop.

Its tools act on program state inside the sandbox (bash, python, the editor, view_image), keep the
plan outside the history, delegate to fresh-context specialists, and finish only through the gate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.kernel.context import Compactor
from harness.kernel.core import Tool
from harness.kernel.loop import LoopHook, NoteHook, ToolLoop
from harness.run.config import MainAgentConfig
from harness.run.context import RunContext
from harness.tools import (
    BashTool,
    EditorTool,
    FinishTool,
    Plan,
    PlanTool,
    PythonTool,
    ViewImageTool,
)

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
NON_STEP_TOOLS = {"finish", "plan"}


def main_system_prompt(main: MainAgentConfig | None = None) -> str:
    main = main or MainAgentConfig()
    # With the computer tool itself (`no-act`) its prompt must not say it acts only through code
    # (the ablation removes acting on state, not just the GUI specialist).
    name = "main_agent_no_act.md" if main.computer else "main_agent.md"
    prompt = (PROMPTS / name).read_text()
    if main.tools == "bash":
        prompt += (
            "\n\nIn this run you have only `bash` and `finish`: no editor, Python tool "
            "or specialists.\n"
        )
    return prompt


class MainAgent:
    """Builds the main agent's tools and loop for one task in one sandbox."""

    def __init__(
        self,
        context: RunContext,
        *,
        review: Callable[[str], str | None] | None = None,
        tools: list[Tool] = (),
        hooks: list[LoopHook] = (),
    ):
        """`review` is the finish gate's; `tools` are what the run adds to the agent's own
        (`delegate`, the `computer` tool under `no-act`); `hooks` join its loop after the compactor
        and the plan note."""
        config, model = context.config, context.model
        self.config = config
        self.plan = Plan()
        self.record = context.record
        self.stats = context.stats
        tools = self._tools(context.sandbox, review, list(tools))
        self.compactor = (
            Compactor(model, config.compaction, self.stats) if config.compaction.enabled else None
        )
        own = [hook for hook in (self.compactor, NoteHook(self.plan_note)) if hook is not None]
        self.loop = ToolLoop(
            model,
            tools,
            main_system_prompt(config.main),
            agent="main",
            config=config.loop,
            scope=context,
            hooks=[*own, *hooks],
        )

    def _tools(self, sandbox, review, added: list[Tool]) -> list[Tool]:
        finish = FinishTool(self.steps_taken, review)
        if self.config.main.tools == "bash":
            return [BashTool(sandbox), finish]
        tools: list[Tool] = [
            BashTool(sandbox),
            PythonTool(sandbox),
            EditorTool(sandbox),
            ViewImageTool(sandbox),
        ]
        if self.config.compaction.enabled:  # `no-sustain` drops the plan with compaction
            tools.append(PlanTool(self.plan, self._plan_changed))
        return [*tools, *added, finish]

    def steps_taken(self) -> int:
        """Non-finish, non-plan tool calls so far: what earns the right to finish."""
        counts = self.loop.tool_counts
        return sum(n for name, n in counts.items() if name not in NON_STEP_TOOLS)

    def plan_note(self) -> str:
        """The externalized plan, shown on every request while the agent has the `plan` tool."""
        if "plan" not in self.loop.tools:
            return ""
        return f"<plan>\n{self.plan.render()}\n</plan>"

    def _plan_changed(self, plan: Plan) -> None:
        if self.record:
            self.record.append("plan", agent="main", items=plan.items)

    def run(self, instruction: str):
        return self.loop.run(instruction)
