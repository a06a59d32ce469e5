"""Who carries out an `andor` action node: a code worker, or the web or GUI specialist.

The seed's action nodes are browser operations, so a node the planner marks `"agent": "web"` (or
`"gui"`) is handed to that specialist through the same `delegate` machinery the main agent uses: a
fresh context holding the node's goal and what earlier nodes achieved, one browser and one desktop
shared by every node of the run. Code workers may delegate a web or GUI part themselves.
`NodeStallWatch` is the mode's stall detection over action nodes.
"""

from __future__ import annotations

import re

from harness.kernel.core import BudgetExceeded, Finished, StateActError, ToolError
from harness.kernel.loop import LoopConfig, ToolLoop
from harness.tools import BashTool, EditorTool, PythonTool
from harness.tools.ask_user import ask_user_among
from sandboxes.toolbox.protocol import FsChanged
from sandboxes.typed import run
from subagents import DelegateTool, ReportTool, available_specialists

from ..jsonask import prompt
from ..stall import StallDetector, StallRouter, fingerprint, stop_run

RUN_ENDING = ("cost_limit", "time_limit", "script_exhausted")
# DelegateTool's result text: "Report from web-1 (3 turns):\n<report>", or, when the specialist
# ended without one, "...\n[web-1 stopped without a report (<status>): <message>.]".
STOPPED = re.compile(r"^Report from (\S+) \(\d+ turns\):\n\[\1 stopped without a report \((\w+)\)")


def ask_user_note(context) -> str:
    """The prompt's paragraph on asking the user, where the task lets a leaf ask."""
    return prompt("andor_ask_user.md") if ask_user_among(context.extra_tools) else ""


def seed_text(instruction: str, done: str, goal: str) -> str:
    return (
        f"<task>\n{instruction}\n</task>\n\n<done-so-far>\n{done}\n</done-so-far>\n\n"
        f"<your-subgoal>\n{goal}\n</your-subgoal>"
    )


class ActionRunner:
    """Runs action nodes for one `andor` run; returns (reported, text) per node."""

    def __init__(self, context):
        self.context = context
        self.config = context.config
        self.specialists = [a for a in available_specialists(context.config) if a != "worker"]
        self.delegate = DelegateTool(context, parent="andor") if self.specialists else None

    def worker_tools(self) -> list:
        sandbox = self.context.sandbox
        tools = [BashTool(sandbox, session="andor"), PythonTool(sandbox), EditorTool(sandbox)]
        if self.delegate is not None:  # a code worker may hand a browser or screen part on
            tools.append(self.delegate.for_agent("andor-worker", self.specialists))
        # the task's own tools (OSWorld 2.0's ask_user): a worker may ask the user what its
        # subgoal leaves open, as the main agent may in the default mode
        return [*tools, *self.context.extra_tools, ReportTool()]

    def run(self, node, instruction: str, done: str) -> tuple[bool, str]:
        agent = node.agent or "worker"
        if agent == "worker":
            return self._worker(node, instruction, done)
        if agent not in self.specialists:
            offered = ", ".join(self.specialists) or "none"
            return False, f"no {agent!r} specialist in this run (available: {offered})"
        facts = f"The whole task, for context: {instruction}\nDone so far:\n{done}"
        result = self.delegate(agent=agent, task=node.goal, facts=facts)
        stopped = STOPPED.match(result.output)
        if stopped and stopped.group(2) in RUN_ENDING:
            raise BudgetExceeded(stopped.group(2), f"the run's budget ended inside {agent}")
        return stopped is None, result.output

    def _worker(self, node, instruction: str, done: str) -> tuple[bool, str]:
        loop = ToolLoop(
            self.context.model,
            self.worker_tools(),
            prompt("andor_action.md") + ask_user_note(self.context),
            agent=f"andor-{node.id}",
            config=LoopConfig(
                max_turns=self.config.andor.worker_turns,
                max_cost_usd=self.config.loop.max_cost_usd,
                max_wall_s=self.config.loop.max_wall_s,
            ),
            scope=self.context,
        )
        end = loop.run(seed_text(instruction, done, node.goal))
        if isinstance(end, BudgetExceeded) and end.status in RUN_ENDING:
            raise end
        if not (isinstance(end, Finished) and end.status == "reported"):
            return False, f"the worker stopped without a report ({end.status}: {end.message})"
        return True, end.message


class NodeStallWatch:
    """Stalls over action nodes: a node repeating its goal and report, nodes that change no file and
    report nothing new, the gate naming the same gaps; answered by feedback, a forced repair of the
    node's parent, then the end of the run (`Finished("stalled")`)."""

    def __init__(self, context):
        config = context.config.stall
        self.detector = StallDetector(config) if config.enabled else None
        self.router = StallRouter(context.record, ("feedback", "replan", "stop"), agent="planner")
        self.sandbox = context.sandbox
        self.started_at = context.started_at

    def after_node(self, node) -> tuple[str | None, str]:
        if self.detector is None:
            return None, ""
        action = {"name": node.agent or "worker", "input": node.goal}
        signal = self.detector.observe_action(action, node.report)
        return self._route(signal or self.detector.observe_turn(self._state_key()))

    def after_gate(self, rejection: str) -> tuple[str | None, str]:
        if self.detector is None:
            return None, ""
        return self._route(self.detector.observe_gate([rejection]))

    def _route(self, signal) -> tuple[str | None, str]:
        if signal is None:
            return None, ""
        response = self.router.route(signal)
        if response == "stop":
            raise stop_run(signal)
        return response, signal.detail

    def _state_key(self) -> str | None:
        try:
            changed = run(self.sandbox, FsChanged(self.started_at, limit=500))
        except (ToolError, StateActError):
            return None
        return fingerprint([(p["path"], p["mtime"], p["size"]) for p in changed.paths])
