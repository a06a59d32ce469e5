"""An evaluation command that could not run is an evaluation error, never a silent 0.

After a fork bomb, an out-of-memory kill or a hang, a checker's command in the machine returns
no output; read as the machine's answer, that output scores 0 as if the agent had simply done
the task wrong. The exit statuses below are the ones `timeout` (which wraps every harness
command) and the container engine give when the command itself never ran to its end, so they are
reported with their reason instead (result.json: status `evaluation_error`).
"""

from __future__ import annotations

from harness.kernel.core import StateActError

FAILED_EXITS = {
    124: "ran past its time limit and was stopped",
    125: "could not be started (the machine could not create a process)",
    126: "could not be started in the machine",
    137: "was killed (out of memory, or it ignored the stop at its time limit)",
}
RESOURCE_SIGNS = (
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "OCI runtime exec failed",
)


class EvaluationFailed(StateActError):
    """A command the evaluation ran in the machine did not run to its end."""


def check_evaluation_command(what: str, code: int, output: str) -> None:
    """Raise `EvaluationFailed` naming `what` when (`code`, `output`) say it did not run to its
    end."""
    reason = FAILED_EXITS.get(code)
    if reason is None and code != 0 and any(sign in output for sign in RESOURCE_SIGNS):
        reason = "failed for want of resources in the machine"
    if reason is None:
        return
    sign = next((s for s in RESOURCE_SIGNS if s in output), None)
    detail = f" ({sign})" if sign else ""
    raise EvaluationFailed(f"the evaluation command {what} {reason}{detail}, exit {code}")
