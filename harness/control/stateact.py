"""The default control mode (`stateact`): the main agent with its tools and `delegate`, plus what
the mode adds around it: the verifier-committed task state with its milestones and boundary checks,
and the stall watch. `StateActController` builds one `StateActHooks` and wires its parts into the
finish review, the main agent's loop hooks and its `delegate` tool."""

from __future__ import annotations

import inspect
import logging

from harness.control.stall import MainAgentStallWatch
from harness.control.task_state import TaskState
from harness.kernel.core import BudgetExceeded, Finished, Tool, ToolError, ToolResult, ToolSpec
from harness.kernel.loop import LoopHook, NoteHook
from harness.kernel.resume import restore_main_agent
from harness.run.context import RunContext
from subagents import DelegateTool, main_agent_extra_tools

from .display import ScreenUseCounter, keep_off_screen
from .finish import finish_review, open_task_state
from .main_agent import MainAgent
from .memory import with_lessons
from .registry import control_mode

log = logging.getLogger(__name__)


class BoundaryCheckedTool:
    """Wraps a tool that hands work to someone else (`delegate`): when it returns, the task state's
    stored probes run again and their verdicts are appended to the result."""

    def __init__(self, inner: Tool, task_state: TaskState, sandbox):
        self.inner = inner
        self.name = inner.name
        self.task_state = task_state
        self.sandbox = sandbox

    def spec(self) -> ToolSpec:
        return self.inner.spec()

    def __call__(self, **params) -> ToolResult:
        try:
            inspect.signature(self.inner.__call__).bind(**params)
        except TypeError as exc:
            raise ToolError(f"Bad arguments for {self.name}: {exc}.") from None
        result = self.inner(**params)
        changes = self.task_state.check_boundary(self.sandbox, f"boundary check after {self.name}")
        if not changes:
            return result
        lines = "\n".join(
            f"- {c.requirement}: {c.before} -> {c.after} ({c.evidence[:160]})" for c in changes
        )
        note = f"\n\n[independent checks after this {self.name}]\n{lines}"
        if result.error is not None:
            return ToolResult(error=result.error + note, image_png=result.image_png)
        return ToolResult(output=result.output + note, image_png=result.image_png)


class StateActHooks:
    """The task state, milestones, boundary checks and stall watch of one default-mode run."""

    def __init__(self, context):
        config, sandbox = context.config, context.sandbox
        self.sandbox = sandbox
        self.config = config
        self.task_state = open_task_state(context)
        self.stall = (
            MainAgentStallWatch(config.stall, sandbox, context.started_at, context.record)
            if config.stall.enabled
            else None
        )
        self.instruction = context.task.instruction
        if self.task_state is not None and self.stall is not None:
            self.task_state.listeners.append(lambda verified: self.stall.progressed())

    def on_decision(self, decision, probes: list[dict]) -> list[str]:
        """The gate's callback: the task state applies the decision; the stall watch hears
        rejections."""
        gaps = (
            self.task_state.apply_gate_decision(decision, probes, self.sandbox)
            if self.task_state
            else []
        )
        if self.stall is not None and (decision.passed is not True or gaps):
            self.stall.gate_rejected([*decision.gap_texts, *gaps])
        return gaps

    @property
    def loop_hooks(self) -> list[LoopHook]:
        """The main agent's loop hooks: the task state's note, then the stall watch."""
        hooks: list[LoopHook] = [NoteHook(self.task_state.render)] if self.task_state else []
        return hooks + ([self.stall] if self.stall is not None else [])

    def wrap_delegate(self, delegate: Tool | None) -> Tool | None:
        if (
            self.stall is not None
            and delegate is not None
            and "worker" in getattr(delegate, "specialists", ())
        ):
            self.stall.fresh_worker = lambda signal: self._fresh_worker(delegate, signal)
            self.stall.router.responses = ("feedback", "replan", "fresh_worker", "stop")
        if (
            delegate is None
            or self.task_state is None
            or not self.config.task_state.boundary_checks
        ):
            return delegate
        return BoundaryCheckedTool(delegate, self.task_state, self.sandbox)

    def attach(self, agent) -> None:
        """Start the stall watch on the main agent's loop (after any resume restored its
        history)."""
        if self.stall is not None:
            self.stall.attach(agent.loop)

    def _fresh_worker(self, delegate, signal) -> str:
        facts = self.task_state.render() if self.task_state else None
        task = (
            f"The main agent stalled ({signal.detail}). Continue this task with a "
            "different approach and "
            f"report the state you leave:\n{self.instruction}"
        )
        result = delegate(agent="worker", task=task, facts=facts)
        return result.output or result.error or ""


@control_mode("stateact")
class StateActController:
    """The main agent runs the task with its tools; `finish` goes through the leaf guard and the
    gate; a resumed run replays its history first."""

    def run(self, context: RunContext) -> Finished | BudgetExceeded:
        counted = context.config.main_display or not _screen_walled_off(context)
        hooks = StateActHooks(context)
        delegate = DelegateTool(context) if context.config.subagents.enabled else None
        delegate = hooks.wrap_delegate(delegate)
        agent = MainAgent(
            context,
            review=finish_review(context, hooks.task_state, hooks.on_decision),
            tools=[*([delegate] if delegate is not None else []), *main_agent_extra_tools(context)],
            hooks=[*hooks.loop_hooks, *([ScreenUseCounter()] if counted else [])],
        )
        if context.resume:
            restore_main_agent(
                agent, context.record, context.sandbox, since_event_index=context.since_event_index
            )
        hooks.attach(agent)
        return agent.run(with_lessons(context))


def _screen_walled_off(context: RunContext) -> bool:
    """Keep the main agent's sessions off the screen (it belongs to the GUI specialist); False,
    with an event, where that is not possible, so that its screen use is counted instead."""
    # Landlock needs no_new_privs, which would take sudo away; a root agent could leave the domain
    # anyway: under --agent-sudo the screen is counted, not walled off.
    unavailable = (
        "--agent-sudo gives the agent root, which no Landlock domain holds"
        if context.config.sandbox.agent_sudo
        else keep_off_screen(context.sandbox)
    )
    if not unavailable:
        return True
    log.warning("the main agent keeps the screen: %s", unavailable)
    context.record.append("display_isolation_unavailable", agent="harness", reason=unavailable)
    return False
