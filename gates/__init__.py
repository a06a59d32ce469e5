"""The finish gate: deterministic structural checks, typed probes, and a narration-blind model
check."""

from __future__ import annotations

from harness.models import make_model

from .gate import FinishGate, Gate
from .verdict import LAYERS, Gap, Verdict

__all__ = ["FinishGate", "Gap", "Gate", "LAYERS", "Verdict", "build_review"]


def build_review(
    instruction,
    sandbox,
    config,
    record,
    stats,
    started_at,
    agent_model,
    gate_model=None,
    on_decision=None,
    on_verdict=None,
):
    """The `review` callable the finish tool uses, or None when the gate is off for this run.

    `on_verdict(round, verdict)` hears every round's `Verdict`; the caller records it."""
    if not config.gate.enabled:
        return None
    if gate_model is None:
        if config.gate.model:
            gate_model = make_model(config.gate.model, config.model_options)
        else:
            gate_model = agent_model
    gate = Gate(
        instruction,
        sandbox,
        gate_model,
        started_at=started_at,
        initially_present=Gate.present(sandbox, instruction),
        max_turns=config.gate.max_turns,
        stats=stats,
        record=record,
    )
    rounds = FinishGate(
        gate, config.gate.max_rejections, on_decision=on_decision, on_verdict=on_verdict
    )
    return rounds.review
