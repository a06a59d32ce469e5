"""What one task's run shares among the main agent, the gate and the control modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import RunConfig
from .core import Model
from .loop import RunStats
from .records import RunRecord


@dataclass
class RunContext:
    """The task, its models and sandbox, the run record, the shared counters and the outcome."""

    task: Any
    config: RunConfig
    model: Model
    gate_model: Model | None
    sandbox: Any
    record: RunRecord
    stats: RunStats
    outcome: Any
    started_at: float
    resume: bool = False
    milestone: dict | None = None

    @property
    def since_event_index(self) -> int | None:
        """Where a resumed run's replay starts: after the milestone its sandbox was restored from."""
        return self.milestone["event_index"] if self.milestone else None

    def review(self, on_decision=None):
        """The finish gate's `review` callable for this run (None when the gate is off)."""
        from gates import build_review

        def record_verdict(round_number: int, verdict) -> None:
            self.outcome.gate_rounds = round_number
            self.outcome.gate_passed = verdict.passed is True

        return build_review(
            self.task.instruction,
            self.sandbox,
            self.config,
            self.record,
            self.stats,
            self.started_at,
            self.model,
            self.gate_model,
            on_decision,
            on_verdict=record_verdict,
        )
