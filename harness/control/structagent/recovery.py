"""StructAgent's evidence-driven completion and targeted recovery (§3.3 "Failure Recovery",
Appendix C "Terminal actor claims").

A DONE claim is a proposal: `blocking_leaves` are the leaf requirements not VERIFIED (a leaf
without a probe needs the verifier's evidence, not only a passing gate). When a subgoal leaves a
target unverified, or DONE is refused, `diagnose` reads the verified evidence and names why:
the attempt lacked evidence, the low-level step verifier stopped it off track or stuck, it
conflicted with a verified requirement (INVALIDATED), the same requirement failed repeatedly under
the current strategy, or the environment blocked the actor; the intervention is inserted as the
next subgoal, naming the requirement, and its progress still commits only through the verifier.
After `MAX_RECOVERIES` in a row it is escalated to the planner.
"""

from __future__ import annotations

from harness.control.task_state import INVALIDATED, VERIFIED, Requirement, TaskState

from .verifier import Subgoal

REPEATED = 2
"""Failed attempts on one requirement after which the strategy must change."""
MAX_RECOVERIES = 2
"""Recovery subgoals one requirement may get in a row; after that the diagnosis is escalated to
the planner as feedback (the paper escalates to a human), so recovery cannot loop."""


def blocking_leaves(state: TaskState) -> list[Requirement]:
    """The leaves a DONE must not pass: every leaf requirement not VERIFIED."""
    return [r for r in state.leaves() if r.status != VERIFIED]


def recovery_rate(recovered: int, recoveries: int) -> float | None:
    """Recoveries that led to a VERIFIED requirement over the recoveries inserted (None: none)."""
    return round(recovered / recoveries, 3) if recoveries else None


def diagnose(
    requirement: Requirement, attempts: int, blocked: str | None = None, step_end: str | None = None
) -> Subgoal:
    """The recovery subgoal for one requirement that did not advance; `step_end` is the low-level
    verifier's status when it ended the attempt (off_track, stuck)."""
    text, evidence = requirement.text[:200], (requirement.evidence or "")[:200]
    if blocked and step_end in ("off_track", "stuck"):
        kind = step_end
        goal = (
            f"The last attempt was stopped as {step_end.replace('_', ' ')} ({blocked[:200]}); "
            f"take another way to make [{requirement.id}] hold: {text}"
        )
    elif blocked:
        kind = "blocked"
        goal = (
            f"Repair what blocked the last attempt ({blocked[:200]}), then make [{requirement.id}] "
            f"hold: {text}"
        )
    elif requirement.status == INVALIDATED:
        kind = "conflict"
        goal = (
            f"[{requirement.id}] was VERIFIED and a later check contradicts it ({evidence}); "
            f"restore it without undoing the other verified requirements: {text}"
        )
    elif attempts >= REPEATED:
        kind = "repeated_failure"
        goal = (
            f"[{requirement.id}] failed {attempts} times under the current method "
            f"({evidence or 'no evidence'}); use a different method to make it hold: {text}"
        )
    elif not requirement.probe and not requirement.evidence:
        kind = "insufficient_evidence"
        goal = (
            f"[{requirement.id}] has no verified evidence yet: make sure it holds and show it "
            f"(read the saved state back and quote it in the report): {text}"
        )
    else:
        kind = "retry"
        goal = f"Make [{requirement.id}] hold; its check says: {evidence or 'not yet'}. {text}"
    return Subgoal(goal, [requirement.id], origin=f"recovery: {kind}")
