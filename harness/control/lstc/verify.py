"""LocalLSTC's Final Verification (Appendix D.7), used when the finish gate is off.

A TERMINATE (`done`) is checked by one model call on the task, the active subgoal, the compact
history (the refinement summary plus the evidence of the steps it does not cover, else a recent
window) and the first and latest screenshots when the run has a screen. PASS confirms the end;
FAIL, or an answer that is not one of the two, returns to planning with the missing conditions as
feedback, the latest screenshot kept as recovery evidence.
"""

from __future__ import annotations

from ..jsonask import JsonAsker, prompt

WINDOW = 12
"""Evidence lines shown when no refinement summary exists (the seed's sliding window)."""


def parse_verdict(value) -> dict:
    if not isinstance(value, dict) or value.get("verdict") not in ("PASS", "FAIL"):
        raise ValueError('expected {"verdict": "PASS" | "FAIL", "missing": "..."}')
    return {"passed": value["verdict"] == "PASS", "missing": str(value.get("missing", ""))[:600]}


def history_text(state) -> str:
    """The compact execution history the verifier reads."""
    done = "\n".join(f"- {s}" for s in state.done_subgoals[-WINDOW:]) or "- (none)"
    evidence = "\n".join(f"- {line}" for line in state.evidence[-WINDOW:]) or "- (none)"
    summary = f"SUMMARY: {state.summary}\n" if state.summary else ""
    return f"{summary}DONE SUBGOALS:\n{done}\nEVIDENCE OF THE ACTIVE SUBGOAL:\n{evidence}"


class FinalVerification:
    """`check(instruction, state, claim, screens)` -> (passed, missing); invalid answers FAIL."""

    def __init__(self, context, retries: int):
        self.ask = JsonAsker(context.model, context, agent="lstc-verify", retries=retries)

    def check(self, instruction: str, state, claim: str, screens: tuple) -> tuple[bool, str]:
        user = (
            f"TASK: {instruction}\nACTIVE SUBGOAL: {state.subgoal or '(none)'}\n"
            f"CLAIM: {claim or '(none)'}\n\n{history_text(state)}"
        )
        if screens:
            user += "\n\nThe images are the first and the latest screenshot."
        value, error = self.ask.ask(
            prompt("lstc_verify.md"), user, parse_verdict, "final verification", images=screens
        )
        if value is None:
            return False, f"the verification answer was unusable ({error})"
        return value["passed"], value["missing"]
