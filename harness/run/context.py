"""What one task's run shares among the main agent, the gate and the control modes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from harness.kernel.core import Model
from harness.kernel.loop import RunScope
from harness.run.config import RunConfig


@dataclass(kw_only=True)
class RunContext(RunScope):
    """The task, its models and sandbox, the run record, the shared counters and the outcome: the
    one object a run's parts are handed (the main agent, `delegate`, the gate, the control
    modes). Built with keywords; as a `RunScope` (counters and record) it is what their tool
    loops share."""

    config: RunConfig
    """The run's configuration."""
    model: Model
    """The agents' model."""
    sandbox: Any
    """The task's sandbox (a `sandboxes.Sandbox`)."""
    task: Any = None
    """The task (a `tasks.schema.Task`); parts that only need a sandbox and a model go without."""
    gate_model: Model | None = None
    """The finish gate's model when it is not the config's (`--gate-model`, the oracle)."""
    outcome: Any = None
    """What the runner learns as it goes (the runner's `TaskOutcome`)."""
    started_at: float = field(default_factory=time.time)
    """When the run's agent work began (files changed since then are the run's)."""
    resume: bool = False
    """Whether this run continues an interrupted one."""
    milestone: dict | None = None
    """The milestone a resumed run's sandbox was restored from."""
    extra_tools: list = field(default_factory=list)
    """Tools the task brings (OSWorld 2.0's `ask_user`) for the agent that owns the task: the main
    agent (`stateact`, `screenshot`), an `andor` leaf worker, the `lstc` planner's actions."""

    @property
    def since_event_index(self) -> int | None:
        """Where a resumed run's replay starts: after the milestone its sandbox was restored
        from."""
        return self.milestone["event_index"] if self.milestone else None
