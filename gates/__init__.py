"""The finish gate: deterministic structural checks, typed probes, and a narration-blind model check."""

from __future__ import annotations

from harness.models import make_model

from .gate import Decision, FinishGate

__all__ = ["Decision", "FinishGate", "build_review"]


def build_review(
    instruction,
    sandbox,
    config,
    record,
    stats,
    started_at,
    outcome,
    agent_model,
    gate_model=None,
    on_decision=None,
):
    """The `review` callable the finish tool uses, or None when the gate is off for this run."""
    if not config.gate.enabled:
        return None
    if gate_model is None:
        if config.gate.model:
            gate_model = make_model(config.gate.model, config.model_options)
        else:
            gate_model = agent_model
    gate = FinishGate(
        instruction, sandbox, gate_model, config, record, stats, started_at, outcome, on_decision
    )
    return gate.review
