"""Choosing among best-of-N rollouts (StructAgent's BBON, without the checker).

Every rollout started from the same post-setup snapshot; the choice uses only what the run itself
knows: the finish gate's verdict, how many requirements the task state's verifiers committed, how
many gate rounds it took, and the cost. The task's checker is never consulted (it scores only the
chosen one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.control.task_state import VERIFIED, TaskState


@dataclass
class Rollout:
    """What the selection knows about one rollout."""

    index: int
    status: str
    gate_passed: bool | None
    gate_rounds: int
    cost_usd: float
    verified: int = 0
    requirements: int = 0

    @classmethod
    def from_result(cls, index: int, result: dict, run_dir: Path) -> Rollout:
        state = TaskState.load(run_dir)
        requirements = state.requirements if state else []
        return cls(
            index=index,
            status=str(result.get("status")),
            gate_passed=result.get("gate_passed"),
            gate_rounds=int(result.get("gate_rounds") or 0),
            cost_usd=float(result.get("cost_usd") or 0.0),
            verified=sum(r.status == VERIFIED for r in requirements),
            requirements=len(requirements),
        )

    def key(self) -> tuple:
        """Smaller is better: gate passed, finished, more verified, fewer rounds, cheaper, first."""
        return (
            self.gate_passed is not True,
            self.status not in ("completed", "infeasible"),
            -self.verified,
            self.gate_rounds,
            self.cost_usd,
            self.index,
        )

    def describe(self) -> str:
        gate = {True: "gate passed", False: "gate rejected", None: "no gate verdict"}[
            self.gate_passed
        ]
        verified = f", {self.verified}/{self.requirements} verified" if self.requirements else ""
        return (
            f"rollout {self.index}: {self.status}, {gate} after {self.gate_rounds} round(s)"
            f"{verified}, ${self.cost_usd:.4f}"
        )


def select_rollout(rollouts: list[Rollout]) -> tuple[Rollout, list[str]]:
    """The chosen rollout and the reasons, one line per rollout then the deciding criterion."""
    ranked = sorted(rollouts, key=Rollout.key)
    best = ranked[0]
    reasons = [rollout.describe() for rollout in rollouts]
    reasons.append(f"selected rollout {best.index}: {_why(best, ranked[1:])}")
    return best, reasons


def _why(best: Rollout, others: list[Rollout]) -> str:
    if not others:
        return "the only rollout"
    runner_up = others[0]
    criteria = (
        ("the gate passed it", lambda r: r.gate_passed is True),
        ("it finished", lambda r: r.status in ("completed", "infeasible")),
        ("more requirements verified", lambda r: -r.verified),
        ("fewer gate rounds", lambda r: -r.gate_rounds),
        ("lower cost", lambda r: -r.cost_usd),
    )
    for reason, measure in criteria:
        if measure(best) != measure(runner_up):
            return reason + (" (no other did)" if reason == "the gate passed it" else "")
    return "tied on gate, requirements and cost: the first"


def selection_summary(results: list[dict], chosen: Rollout | None, reasons: list[str]) -> dict:
    """What a best-of run's result.json adds to the chosen rollout's: the totals of every rollout
    (tokens, turns, cost: what the run spent) and `best_of` with the selection and its reasons."""
    totals = {
        key: sum(r.get(key) or 0 for r in results)
        for key in ("input_tokens", "output_tokens", "model_turns", "main_turns", "tool_uses")
    }
    picked = results[chosen.index - 1] if chosen else {}
    return {
        **totals,
        "cost_usd": round(sum(r.get("cost_usd") or 0.0 for r in results), 6),
        "delegations": picked.get("delegations", 0),
        "gui_steps": picked.get("gui_steps", 0),
        "best_of": {
            "n": len(results),
            "selected": chosen.index if chosen else None,
            "reasons": reasons,
            "selected_cost_usd": picked.get("cost_usd"),
            "rollouts": [
                {
                    k: r.get(k)
                    for k in ("rollout", "status", "gate_passed", "gate_rounds", "cost_usd")
                }
                for r in results
            ],
        },
    }
