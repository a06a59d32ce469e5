"""What the default (`stateact`) mode adds around the main agent: the verifier-committed task
state with its milestones and boundary checks, and the stall watch. The runner builds one
`StateActHooks` and wires its parts into the gate, the main agent's loop hooks and its `delegate`
tool."""

from __future__ import annotations

import inspect
import logging

from harness.control.stall import MainAgentStallWatch
from harness.control.task_state import INVALIDATED, TaskState
from harness.kernel.core import Tool, ToolError, ToolResult, ToolSpec
from harness.kernel.loop import LoopHook, NoteHook

from .milestones import MilestoneKeeper

log = logging.getLogger(__name__)


def open_task_state(context) -> TaskState | None:
    """The run's task state (restored on resume, else initialized by the model), or None when
    off."""
    config, record = context.config, context.record
    if not config.task_state.enabled:
        return None
    state = TaskState.load(record.dir) if context.resume else None
    if state is None:
        state = TaskState.initialize(
            context.task.instruction,
            context.model,
            run_dir=record.dir,
            scope=context,
        )
    if config.task_state.milestones:
        state.listeners.append(MilestoneKeeper(context.sandbox, record, context.started_at))
    return state


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


class LeafFinishGuard:
    """`finish` under the task state (StructAgent's leaf gate): the stored probes run first, and
    while a leaf requirement's probe says it does not hold the finish is refused, naming each one
    with its evidence (an INVALIDATED one as a regression), before any gate round is spent. After
    `max_refusals` refusals it yields to the gate, whose round fails closed on a failing probe."""

    def __init__(self, task_state: TaskState, sandbox, review, record=None, max_refusals: int = 3):
        self.task_state = task_state
        self.sandbox = sandbox
        self.review = review
        self.record = record
        self.max_refusals = max_refusals
        self.refusals = 0

    def __call__(self, summary: str) -> str | None:
        self.task_state.check_boundary(self.sandbox, "check at finish")
        blocking = self.task_state.refuted_leaves()
        if not blocking or self.refusals >= self.max_refusals:
            return self.review(summary) if self.review else None
        self.refusals += 1
        if self.record is not None:
            self.record.append(
                "finish_refused",
                agent="harness",
                requirements=[r.id for r in blocking],
                refusal=self.refusals,
            )
        lines = "\n".join(_blocking_line(r) for r in blocking)
        return (
            "finish is refused: these requirements are not verified by their independent checks "
            f"(refusal {self.refusals} of {self.max_refusals}):\n{lines}\n"
            "Make the saved state satisfy them, re-read it, and call finish again."
        )


def _blocking_line(requirement) -> str:
    evidence = requirement.evidence[:200] or "no evidence yet"
    if requirement.status == INVALIDATED:
        return (
            f"- [{requirement.id}] {requirement.text[:120]}: was VERIFIED, now fails "
            f"({evidence}); something undid it, restore it"
        )
    return f"- [{requirement.id}] {requirement.text[:120]}: {requirement.status} ({evidence})"


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

    def guard_finish(self, review, record=None):
        """The finish gate's `review` behind the leaf guard when the task state is on."""
        if self.task_state is None:
            return review
        return LeafFinishGuard(self.task_state, self.sandbox, review, record)

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
