"""Control modes: who decides the next step of a run.

`stateact` (default) is the main agent with its tools, plus the hooks in `stateact.py`; `andor`
is a framework-owned AND/OR tree whose action nodes run workers (`andor.py`); `lstc` is long-term
control state with short commitments, for small local models (`lstc.py`); `screenshot` is the
paper's baseline, a computer tool alone (`screenshot.py`). `run_control` runs the latter
three and returns what `MainAgent.run` would: a `Finished` or `BudgetExceeded`.
"""

from __future__ import annotations

from gates import build_review
from harness.kernel.core import require_one_of

from .stateact import LeafFinishGuard, StateActHooks

__all__ = ["StateActHooks", "gate_review", "run_control"]


def run_control(context):
    """Run the task under the non-default control mode `context.config.control`."""
    from .stateact import open_task_state

    config, sandbox = context.config, context.sandbox
    require_one_of("control mode", config.control, ("andor", "lstc", "screenshot"))
    if config.control == "screenshot":  # the baseline: no task state, no guard, its own gate switch
        from .screenshot import ScreenshotController

        context.outcome.status = "running"
        controller = ScreenshotController(context, gate_review(context))
        return controller.run(resume=context.resume, since_event_index=context.since_event_index)
    task_state = open_task_state(context)
    on_decision = (
        (lambda decision, probes: task_state.apply_gate_decision(decision, probes, sandbox))
        if task_state
        else None
    )
    review = gate_review(context, on_decision)
    if task_state is not None and review is not None:
        review = LeafFinishGuard(task_state, sandbox, review, context.record)
    context.outcome.status = "running"
    if config.control == "andor":
        from .andor import AndOrController

        controller = AndOrController(context, review, task_state)
    else:
        from .lstc import LstcController

        controller = LstcController(context, review, task_state)
    return controller.run(resume=context.resume, since_event_index=context.since_event_index)


def gate_review(context, on_decision=None):
    """The finish gate's `review` callable for this run (None when the gate is off); each round's
    verdict is recorded on the run's outcome."""

    def record_verdict(round_number: int, verdict) -> None:
        context.outcome.gate_rounds = round_number
        context.outcome.gate_passed = verdict.passed is True

    return build_review(context, on_decision=on_decision, on_verdict=record_verdict)
