"""StructAgent's DONE auditor (Appendix C "DONE auditor", Figure 8): after the structured DONE gate
accepted a planner DONE (every leaf VERIFIED), a separate model audits the final structured state
with its evidence, the values, the user's answers and, where the run has a screen, the current
screenshot and accessibility tree. It reads the task first, cross-checks each requirement's
evidence against it, lists the gaps and gives PASS, FAIL or PARTIAL; anything but PASS refuses the
DONE, and an unusable answer counts as PARTIAL (the paper's parse fallback).

It runs when the finish gate is off (`--preset no-verify`): with the gate on, the narration-blind
gate is the final audit (a model on a frozen snapshot behind structural checks and probes), and a
second text verdict before it would only spend a call. `--structagent-without auditor` removes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.control.task_state import TaskState

from ..jsonask import JsonAsker, prompt
from .observe import observe

VERDICTS = ("PASS", "FAIL", "PARTIAL")
SUMMARY_CHARS = 2000


def parse_audit(value) -> dict:
    if not isinstance(value, dict) or value.get("verdict") not in VERDICTS:
        raise ValueError('expected {"analysis": "...", "gaps": [...], "verdict": "PASS"|"FAIL"}')
    gaps = value.get("gaps") or []
    if not isinstance(gaps, list) or not all(isinstance(g, str) for g in gaps):
        raise ValueError("`gaps` must be a list of strings")
    return {"verdict": value["verdict"], "gaps": [g[:300] for g in gaps[:10]]}


@dataclass
class Audit:
    passed: bool
    verdict: str
    gaps: list[str]


class DoneAuditor:
    """One run's DONE auditor."""

    def __init__(self, context, state: TaskState):
        self.context = context
        self.state = state
        self.ask = JsonAsker(context.model, context, agent="done-auditor", main=False)

    def audit(self, number: int, summary: str) -> Audit:
        seen = observe(self.context)
        evidence = "\n".join(
            f"- [{r.id}] {r.status} by {r.source or 'nobody'}: {r.evidence[:300] or '(none)'}"
            for r in self.state.requirements
        )
        user = (
            f"<task>\n{self.context.task.instruction}\n</task>\n\n{self.state.render()}\n\n"
            f"<evidence>\n{evidence}\n</evidence>\n\n<done-claim>\n{summary[:SUMMARY_CHARS]}\n"
            f"</done-claim>\n\n{seen.text}"
        )
        answer, error = self.ask.ask(
            prompt("structagent_audit.md"),
            user,
            parse_audit,
            f"done audit {number}",
            images=tuple(seen.images),
        )
        if answer is None:
            return Audit(False, "PARTIAL", [f"the audit gave no usable answer ({error})"])
        return Audit(answer["verdict"] == "PASS", answer["verdict"], answer["gaps"])
