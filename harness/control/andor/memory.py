"""The `andor` mode's observation summarizer and the internal representations it keeps
(StructuredAgent Table 27): the interaction history (each action's observation summary), the task
progress summary, the notes summary (what every observation so far says that matters to the task),
the task constraints, the current observation summary, and the action history; plus the seed's
candidate table checked against the constraints (its fix for stopping early on "find N items"
tasks).

After each action node reports, one tool-less JSON question merges what the report observed into
these; they are shown in every later planner question and action seed, and the root may not
finish while fewer candidates than needed meet the constraints.
"""

from __future__ import annotations

MAX_CANDIDATES = 40
MAX_CONSTRAINTS = 12
SUMMARY_CHARS = 800
HISTORY_SHOWN = 6
"""Interaction- and action-history entries each request shows (all are kept in `tree.json`)."""
VERDICTS = ("meets", "fails", "unknown")


def parse_observation(value) -> dict:
    """`{"constraints": [...], "needed": N | null, "candidates": [{"name", "verdict", "note"?}]}`"""
    if not isinstance(value, dict):
        raise ValueError('expected {"constraints": [...], "needed": N | null, "candidates": [...]}')
    constraints = value.get("constraints", [])
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise ValueError("`constraints` must be a list of strings")
    needed = value.get("needed")
    if needed is not None and (
        isinstance(needed, bool) or not isinstance(needed, int) or needed < 1
    ):
        raise ValueError(
            "`needed` must be a positive whole number, or null when the task names none"
        )
    candidates = value.get("candidates", [])
    if not isinstance(candidates, list):
        raise ValueError("`candidates` must be a list")
    checked = []
    for n, item in enumerate(candidates, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"candidate {n} needs a `name` string")
        if item.get("verdict") not in VERDICTS:
            raise ValueError(f"candidate {n} needs `verdict`: one of {', '.join(VERDICTS)}")
        note = item.get("note") if isinstance(item.get("note"), str) else ""
        checked.append({"name": item["name"].strip(), "verdict": item["verdict"], "note": note})
    summaries = {}
    for key in ("observation", "progress", "notes"):
        text = value.get(key, "")
        if not isinstance(text, str):
            raise ValueError(f"`{key}` must be a string")
        summaries[key] = " ".join(text.split())[:SUMMARY_CHARS]
    return {
        "constraints": [c.strip() for c in constraints if c.strip()][:MAX_CONSTRAINTS],
        "needed": needed,
        "candidates": checked,
        **summaries,
    }


class CandidateTable:
    """The candidates and constraints gathered so far, kept in the tree's `memory` (saved)."""

    def __init__(self, memory: dict):
        self.memory = memory
        memory.setdefault("constraints", [])
        memory.setdefault("needed", None)
        memory.setdefault("candidates", [])
        for key in ("progress", "notes", "observation"):
            memory.setdefault(key, "")
        memory.setdefault("history", [])
        memory.setdefault("actions", [])

    def acted(self, node_id: str, goal: str, report: str) -> None:
        """The action history: one line per executed action node."""
        first = " ".join(report.split())[:160]
        self.memory["actions"].append(f"{node_id} {goal[:80]}: {first}")

    def merge(self, observation: dict, node_id: str = "") -> None:
        """Add or update candidates by name; constraints and the count are taken once stated;
        the summaries replace the earlier ones and the observation joins the history."""
        for key in ("progress", "notes", "observation"):
            if observation.get(key):
                self.memory[key] = observation[key]
        if observation.get("observation"):
            self.memory["history"].append(f"{node_id}: {observation['observation']}")
        if observation["constraints"]:
            self.memory["constraints"] = observation["constraints"]
        if observation["needed"] is not None:
            self.memory["needed"] = observation["needed"]
        by_name = {c["name"].lower(): c for c in self.memory["candidates"]}
        for candidate in observation["candidates"]:
            known = by_name.get(candidate["name"].lower())
            if known is None:
                self.memory["candidates"].append(candidate)
                by_name[candidate["name"].lower()] = candidate
            elif candidate["verdict"] != "unknown" or known["verdict"] == "unknown":
                known.update(candidate)
        self.memory["candidates"] = self.memory["candidates"][-MAX_CANDIDATES:]

    def meeting(self) -> list[dict]:
        return [c for c in self.memory["candidates"] if c["verdict"] == "meets"]

    def shortfall(self) -> str | None:
        """Why the task cannot be finished yet by the table's count, or None."""
        needed = self.memory["needed"]
        found = len(self.meeting())
        if needed is None or found >= needed:
            return None
        return (
            f"only {found} of the {needed} required candidates meet every constraint so far; "
            "keep searching before finishing"
        )

    def render(self) -> str:
        memory = self.memory
        lines = [f"task progress: {memory['progress']}"] if memory["progress"] else []
        lines += [f"notes: {memory['notes']}"] if memory["notes"] else []
        lines += [f"current observation: {memory['observation']}"] if memory["observation"] else []
        if memory["history"]:
            lines += [
                "interaction history:",
                *[f"- {h}" for h in memory["history"][-HISTORY_SHOWN:]],
            ]
        if memory["actions"]:
            lines += ["action history:", *[f"- {a}" for a in memory["actions"][-HISTORY_SHOWN:]]]
        table = self._table()
        return "\n".join([*lines, *([table] if table else [])])

    def _table(self) -> str:
        if not self.memory["constraints"] and not self.memory["candidates"]:
            return ""
        needed = self.memory["needed"]
        lines = [f"needed: {needed if needed is not None else 'not stated'}", "constraints:"]
        lines += [f"- {c}" for c in self.memory["constraints"]] or ["- (none stated)"]
        lines.append(f"candidates ({len(self.meeting())} meet every constraint):")
        lines += [
            f"- [{c['verdict']}] {c['name']}" + (f": {c['note']}" if c["note"] else "")
            for c in self.memory["candidates"]
        ] or ["- (none yet)"]
        return "\n".join(lines)
