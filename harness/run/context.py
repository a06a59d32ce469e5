"""What one task's run shares among the main agent, the gate and the control modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.kernel.core import Model
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord
from harness.run.config import RunConfig


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
