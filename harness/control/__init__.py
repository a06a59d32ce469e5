"""Control modes: who decides the next step of a run.

`stateact` (default) is the main agent with its tools, plus the hooks in `stateact.py`; `andor` is a
framework-owned AND/OR tree whose action nodes run workers (`andor.py`); `lstc` is long-term control
state with short commitments, for small local models (`lstc.py`). `run_control` runs the latter two and
returns what `MainAgent.run` would: a `Finished` or `BudgetExceeded`.
"""

from __future__ import annotations

from harness.core import StateActError

from .stateact import StateActHooks

__all__ = ["StateActHooks", "run_control"]


def run_control(
    task,
    model,
    gate_model,
    sandbox,
    config,
    record,
    stats,
    started_at,
    resume,
    outcome,
    milestone=None,
):
    """Run `task` under the non-default control mode `config.control`."""
    from gates import build_review

    from .stateact import open_task_state

    if config.control not in ("andor", "lstc"):
        raise StateActError(
            f"unknown control mode {config.control!r}; choose one of: stateact, andor, lstc."
        )
    task_state = open_task_state(task, model, sandbox, config, record, stats, started_at, resume)
    on_decision = (
        (lambda decision, probes: task_state.apply_gate_decision(decision, probes, sandbox))
        if task_state
        else None
    )
    review = build_review(
        task.instruction,
        sandbox,
        config,
        record,
        stats,
        started_at,
        outcome,
        model,
        gate_model,
        on_decision,
    )
    outcome.status = "running"
    if config.control == "andor":
        from .andor import AndOrController

        controller = AndOrController(
            task.instruction, model, sandbox, config, record, stats, review, task_state
        )
    else:
        from .lstc import LstcController

        controller = LstcController(
            task.instruction, model, sandbox, config, record, stats, started_at, review, task_state
        )
    since = milestone["event_index"] if milestone else None
    return controller.run(resume=resume, since_event_index=since)
