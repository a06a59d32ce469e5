"""An evaluation command that could not run is an evaluation error, never a silent 0.

After a fork bomb, an out-of-memory kill or a hang, a checker's command in the machine returns
no output; read as the machine's answer, that output scores 0 as if the agent had simply done
the task wrong. The exit statuses below are the ones `timeout` (which wraps every harness
command) and the container engine give when the command itself never ran to its end, so they are
reported with their reason instead (result.json: status `evaluation_error`). A plain failure of the
command (exit 1, 126 for a script that cannot be run, 127) stays the machine's answer, as in
OSWorld.
"""

from __future__ import annotations

from harness.kernel.core import StateActError

FAILED_EXITS = {
    125: "could not be started (the machine could not create a process)",
    137: "was killed (out of memory, or it ignored the stop at its time limit)",
}
TIMED_OUT = 124  # also a command's own `timeout` inside the checker: counts only at the limit
RESOURCE_SIGNS = (
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "OCI runtime exec failed",
)


class EvaluationFailed(StateActError):
    """A command the evaluation ran in the machine did not run to its end."""


def check_evaluation_command(
    what: str, code: int, output: str, elapsed_s: float = 0.0, limit_s: float | None = None
) -> None:
    """Raise `EvaluationFailed` naming `what` when (`code`, `output`) say it did not run to its
    end: the harness's time limit (`limit_s`) reached, no process to run it, killed, or a failure
    that names a lack of resources."""
    reason = FAILED_EXITS.get(code)
    if code == TIMED_OUT and limit_s is not None and elapsed_s >= 0.95 * limit_s:
        reason = f"ran past its time limit of {limit_s:g} s and was stopped"
    sign = next((s for s in RESOURCE_SIGNS if s in output), None) if code != 0 else None
    if reason is None and sign is not None:
        reason = "failed for want of resources in the machine"
    if reason is None:
        return
    detail = f" ({sign})" if sign else ""
    raise EvaluationFailed(f"the evaluation command {what} {reason}{detail}, exit {code}")
