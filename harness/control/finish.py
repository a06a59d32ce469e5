"""How a run may finish: the task state it keeps, and the one review its `finish` goes through
(the leaf guard in front of the narration-blind gate). Every control mode builds its review here."""

from __future__ import annotations

from gates import build_review
from harness.control.task_state import INVALIDATED, TaskState

from .milestones import MilestoneKeeper


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


def gate_review(context, on_decision=None):
    """The finish gate's `review` callable for this run (None when the gate is off); each round's
    verdict is recorded on the run's outcome."""

    def record_verdict(round_number: int, verdict) -> None:
        if context.outcome is not None:
            context.outcome.gate_rounds = round_number
            context.outcome.gate_passed = verdict.passed is True

    return build_review(context, on_decision=on_decision, on_verdict=record_verdict)


def finish_review(context, task_state: TaskState | None, on_decision=None):
    """The review a mode's `finish` calls: the gate (with `on_decision` hearing its verdicts; by
    default the task state applies them) behind the leaf guard while a task state is kept."""
    if on_decision is None and task_state is not None:

        def on_decision(decision, probes):
            return task_state.apply_gate_decision(decision, probes, context.sandbox)

    review = gate_review(context, on_decision)
    if task_state is None:
        return review
    return LeafFinishGuard(task_state, context.sandbox, review, context.record)


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
