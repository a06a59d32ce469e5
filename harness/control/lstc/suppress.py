"""LocalLSTC's pre-execution suppression of repeated equivalent actions (§3.2.2, Appendix D.5 and
Table 11).

Before an action runs, its fingerprint is checked against what the same action did before: when
it already ran `threshold - 1` times in a row with the same result and the state has not changed
since, there is no basis for repeating it and it is refused without running. The thresholds are
the paper's: a bash or software-API (python) action-result repeated 3 times, a GUI action-result
5 times, and the same GUI decision proposed by 3 consecutive planner calls. A change of the
persistent subgoal (from the step after the one that adopted it) or of the files clears the
counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..stall import fingerprint

CODE_REPEATS = 3
GUI_REPEATS = 5
GUI_DECISIONS = 3
CODE_TOOLS = ("bash", "python")


@dataclass
class _Seen:
    result: str
    state: str | None
    count: int = 1


@dataclass
class RepeatGuard:
    """Counts repeats per action fingerprint; `refuse` answers before execution."""

    gui_tools: tuple[str, ...] = ()
    runs: dict[str, _Seen] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)
    """The GUI decision (first GUI action) of each recent planner call."""

    @staticmethod
    def key(tool: str, command: str) -> str:
        return fingerprint({"name": tool, "input": " ".join(command.split())})

    def plan(self, actions: list[dict]) -> None:
        """One planner call's commitment: its GUI decision joins the decision history."""
        gui = [a for a in actions if a["tool"] in self.gui_tools]
        self.decisions = [*self.decisions, self.key(gui[0]["tool"], gui[0]["input"]) if gui else ""]
        self.decisions = self.decisions[-GUI_DECISIONS:]

    def refuse(self, tool: str, command: str, state: str | None) -> str | None:
        """Why this action must not run now, or None."""
        key = self.key(tool, command)
        if tool in self.gui_tools and len(self.decisions) == GUI_DECISIONS:
            if all(d == key for d in self.decisions):
                return f"the same GUI decision came from {GUI_DECISIONS} planner calls in a row"
        seen = self.runs.get(key)
        if seen is None or seen.state != state:
            return None
        limit = GUI_REPEATS if tool in self.gui_tools else CODE_REPEATS
        if seen.count >= limit - 1:
            return f"it already ran {seen.count} times in a row with the same result"
        return None

    def ran(self, tool: str, command: str, result: str, state: str | None) -> None:
        """Record what the action did (`result`) and the state it left."""
        key = self.key(tool, command)
        seen = self.runs.get(key)
        outcome = fingerprint(result)
        if seen is not None and seen.result == outcome:
            seen.count, seen.state = seen.count + 1, state
        else:
            self.runs[key] = _Seen(outcome, state)

    def clear(self, keep: list[tuple[str, str]] = ()) -> None:
        """The persistent subgoal changed: repeats before it are no basis for refusing (those of
        the step that adopted it, `keep` as (tool, input) pairs, still count)."""
        kept = {self.key(tool, command) for tool, command in keep}
        self.runs = {key: seen for key, seen in self.runs.items() if key in kept}
        self.decisions = self.decisions[-1:]
