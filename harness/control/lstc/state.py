"""The `lstc` mode's long-term control state and the strict parser of a planner's commitment
(LocalLSTC §3.2.1: the persistent control state C_t = (g_t, E_t, f_t) and the L2S commitment)."""

from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("continue", "advance", "error", "stall", "finish")
TOOLS = ("bash", "python", "wait", "done", "infeasible")
MAX_CANDIDATES = 3
MAX_WAIT_S = 20.0
"""The seed's explicit WAIT timeout."""


@dataclass
class LongTermState:
    """What persists across steps; rendered into every planning request."""

    subgoal: str = ""
    evidence: list[str] = field(default_factory=list)
    feedback: str = "Start: choose the first subgoal."
    status: str = "advance"
    done_subgoals: list[str] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    """Fingerprints of actions that repeated without progress; proposals repeating them are
    refused."""
    suppressed_text: list[str] = field(default_factory=list)
    steps: int = 0
    summary: str = ""
    """The last context refinement's summary of everything before the current subgoal."""
    unsummarized: int = 0
    """Steps since the last context refinement."""
    recent: list[str] = field(default_factory=list)
    """The last step's evidence lines (what the planner sees without L2S)."""
    answers: list[str] = field(default_factory=list)
    """The user's answers to `ask_user` actions, verbatim (`ask.py`); they hold for the whole
    task."""

    def render(self, instruction: str, task_state=None) -> str:
        evidence = "\n".join(f"- {line}" for line in self.evidence) or "- (none yet)"
        done = "\n".join(f"- {s}" for s in self.done_subgoals[-6:]) or "- (none)"
        avoid = "\n".join(f"- {s}" for s in self.suppressed_text[-5:])
        parts = [
            f"TASK: {instruction}",
            f"STEP: {self.steps + 1}",
            f"STATUS: {self.status}",
            *([f"SUMMARY SO FAR: {self.summary}"] if self.summary else []),
            f"SUBGOAL: {self.subgoal or '(none yet)'}",
            f"DONE SUBGOALS:\n{done}",
            f"EVIDENCE FOR THE SUBGOAL:\n{evidence}",
            f"FEEDBACK: {self.feedback}",
            *self._answers(),
        ]
        if avoid:
            parts.append(f"DO NOT REPEAT (no effect before):\n{avoid}")
        if task_state is not None:
            parts.append(task_state.render())
        return "\n\n".join(parts)

    def render_short(self, instruction: str) -> str:
        """Without L2S: the task and the last step's result only, no persistent control state."""
        last = "\n".join(f"- {line}" for line in self.recent) or "- (no step yet)"
        parts = [f"TASK: {instruction}", f"LAST STEP:\n{last}", f"FEEDBACK: {self.feedback}"]
        return "\n\n".join([*parts, *self._answers()])

    def _answers(self) -> list[str]:
        if not self.answers:
            return []
        return ["USER ANSWERS:\n" + "\n".join(f"- {a}" for a in self.answers)]


def parse_commitment(value, max_actions: int = 4, tools: tuple[str, ...] = TOOLS) -> dict:
    """The chosen candidate `{"subgoal", "actions": [{"tool", "input"}]}` of a planner answer."""
    if not isinstance(value, dict) or not isinstance(value.get("candidates"), list):
        raise ValueError('expected {"candidates": [...], "best": N}')
    candidates = value["candidates"]
    if not 1 <= len(candidates) <= MAX_CANDIDATES:
        raise ValueError(
            f"`candidates` must hold 1 to {MAX_CANDIDATES} proposals, not {len(candidates)}"
        )
    best = value.get("best", 1)
    if not isinstance(best, int) or not 1 <= best <= len(candidates):
        raise ValueError(f"`best` must be a candidate number from 1 to {len(candidates)}")
    chosen = candidates[best - 1]
    if (
        not isinstance(chosen, dict)
        or not isinstance(chosen.get("subgoal"), str)
        or not chosen["subgoal"].strip()
    ):
        raise ValueError(f"candidate {best} needs a non-empty `subgoal` string")
    actions = chosen.get("actions")
    if not isinstance(actions, list) or not 1 <= len(actions) <= max_actions:
        raise ValueError(f"candidate {best} needs `actions`: a list of 1 to {max_actions} actions")
    for n, action in enumerate(actions, start=1):
        if not isinstance(action, dict) or action.get("tool") not in tools:
            raise ValueError(
                f"action {n} of candidate {best} needs `tool`: one of {', '.join(tools)}"
            )
        if action["tool"] == "wait":
            _wait_seconds(action, n)
        elif action["tool"] not in ("done", "infeasible") and (
            not isinstance(action.get("input"), str) or not action["input"].strip()
        ):
            raise ValueError(
                f"action {n} ({action['tool']}) needs `input`: the command, code, element or "
                "text as a string"
            )
    return {"subgoal": chosen["subgoal"].strip(), "actions": actions, "candidates": len(candidates)}


def _wait_seconds(action: dict, n: int) -> float:
    try:
        seconds = float(action.get("input", 2))
    except (TypeError, ValueError):
        raise ValueError(f"action {n} (wait) needs `input`: seconds as a number") from None
    if not 0 < seconds <= MAX_WAIT_S:
        raise ValueError(f"action {n} (wait) waits more than 0 and at most {MAX_WAIT_S:.0f} s")
    return seconds
