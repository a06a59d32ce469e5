"""The finish gate: deterministic structural checks, typed probes, and a narration-blind model
check."""

from __future__ import annotations

import time

from harness.models import make_model
from harness.run.context import RunContext

from . import screen_probes  # noqa: F401  (registers the a11y_match and screen_region kinds)
from .gate import FinishGate, Gate
from .paper import PaperGate
from .verdict import LAYERS, Gap, Verdict

__all__ = [
    "FinishGate",
    "Gap",
    "Gate",
    "LAYERS",
    "PaperGate",
    "Verdict",
    "build_review",
    "build_subtask_review",
]


def build_review(context: RunContext, *, on_decision=None, on_verdict=None):
    """The `review` callable the run's finish tool uses, or None when the gate is off for this run.

    It judges the run's task by what changed since the run started, with the run's gate model
    (`context.gate_model`, else the configured one, else the agents'). `on_verdict(round, verdict)`
    hears every round's `Verdict` (the caller records it); `on_decision(verdict, probes)` may add
    gaps (see `FinishGate`)."""
    if not context.config.gate.enabled:
        return None
    gate = _gate(context, context.task.instruction, context.started_at, context.gate_model)
    rounds = FinishGate(
        gate,
        context.config.gate.max_rejections,
        on_decision=on_decision,
        on_verdict=on_verdict,
    )
    return rounds.review


def build_subtask_review(context: RunContext, subtask: str):
    """A worker's own finish gate (the nested ablation), or None when the gate is off: it judges
    `subtask` by what changes from now on, with the configured gate model (not the run's
    override), and its rounds are counted apart from the run's gate."""
    if not context.config.gate.enabled:
        return None
    gate = _gate(context, subtask, time.time(), None)
    return FinishGate(gate, context.config.gate.max_rejections).review


def _gate(context: RunContext, instruction: str, started_at: float, gate_model) -> Gate:
    config = context.config
    if gate_model is None:
        if config.gate.model:
            gate_model = make_model(config.gate.model, config.model_options)
        else:
            gate_model = context.model
    gate_class = PaperGate if config.gate.mode == "paper" else Gate
    return gate_class(
        instruction,
        context.sandbox,
        gate_model,
        started_at=started_at,
        initially_present=Gate.present(context.sandbox, instruction),
        max_turns=config.gate.max_turns,
        scope=context,
    )
