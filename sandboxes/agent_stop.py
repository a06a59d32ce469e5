"""Judging starts when the agent stops: freeze the agent's processes before the harness observes.

`freeze_agent(sandbox)` stops every process of the agent's uid in the sandbox at once and resumes
only the toolbox and the task's applications (see `toolbox/freeze.py` for how and which);
`thaw_agent` resumes what it stopped (a gate round that rejects hands the machine back to the
agent). With `end=True` (the agent's part is over: finish, budget, crash) the stopped processes are
killed instead. A sandbox that has no processes to freeze (a test's in-memory stand-in) is left as
it is.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from .base import SandboxError

log = logging.getLogger(__name__)

FREEZE_LAUNCHER = (
    "import sys; sys.path.insert(0, '/opt/stateact'); from toolbox.freeze import main; main()"
)
"""How a backend with root in the sandbox runs the freezer: the root-owned toolbox copy."""


@dataclass
class FrozenAgent:
    """What one freeze did: the processes it stopped (and may resume), the ones it kept running."""

    frozen: list[dict] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    ended: bool = False

    @classmethod
    def from_answer(cls, answer: object) -> FrozenAgent:
        if not isinstance(answer, dict) or "frozen" not in answer:
            raise SandboxError(f"the sandbox could not stop the agent's processes: {answer!r:.300}")
        return cls(
            frozen=list(answer["frozen"]),
            kept=[str(pid) for pid in answer.get("kept", [])],
            refused=dict(answer.get("refused", {})),
            ended=bool(answer.get("ended")),
        )

    def summary(self) -> dict:
        """For the run record: how many were stopped or ended, and which kept running."""
        return {"stopped": len(self.refused), "kept": len(self.kept), "ended": self.ended}


def parse_answer(code: int, output: str) -> dict:
    """The freezer's JSON line from a command's output."""
    lines = [line for line in output.strip().splitlines() if line.startswith("{")]
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise SandboxError(
            f"the sandbox could not stop the agent's processes (exit {code}): {output[-300:]}"
        ) from None


def freeze_agent(sandbox, end: bool = False) -> FrozenAgent | None:
    """Stop the agent's processes in `sandbox` (see the module); None for a sandbox without any."""
    freeze = getattr(sandbox, "freeze_agent", None)
    if freeze is None:
        return None
    frozen = freeze(end=end)
    log.info("sandbox %s: agent %s", getattr(sandbox, "id", "?"), frozen.summary())
    return frozen


def thaw_agent(sandbox, frozen: FrozenAgent | None) -> None:
    """Resume what `freeze_agent` stopped (nothing when it ended them)."""
    if frozen is None or frozen.ended or not frozen.frozen:
        return
    sandbox.thaw_agent(frozen)
