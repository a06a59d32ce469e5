"""The verifier-committed task state: requirements, discovered values and evidence (StructAgent's
unified state).

A requirement is PENDING, VERIFIED or INVALIDATED, and only a verifier moves it: a probe's
determinate answer, the finish gate's verdict, or a boundary check (the stored probes re-run when
a subagent or an action node returns). Nothing the agent says or calls can set a status; there is
no tool for it. A failed probe on a VERIFIED requirement INVALIDATES it. Every change is one line
of `state.jsonl` in the run directory, with its evidence, and listeners hear about each batch of
newly verified requirements (the milestone keeper snapshots the sandbox then).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gates.probe_view import ReadOnlyView
from gates.probes import validate_probe
from gates.structural import named_paths
from harness.kernel.core import StateActError, ToolError

log = logging.getLogger(__name__)

PENDING, VERIFIED, INVALIDATED = "PENDING", "VERIFIED", "INVALIDATED"
STATE_FILE = "state.jsonl"
MAX_REQUIREMENTS = 12
EVIDENCE_CHARS = 300
KEPT_NOTES = 8
"""The newest user answers the rendered state shows."""


@dataclass
class Requirement:
    """One thing the finished task must satisfy."""

    id: str
    text: str
    probe: dict | None = None
    """A typed probe spec (see `gates/probes.py`) that decides this requirement, when one was
    given."""
    status: str = PENDING
    evidence: str = ""
    """What the verifier that last decided it saw."""
    source: str = ""
    """Which verifier last decided it (probe, gate verdict, boundary check)."""
    depends_on: list[str] = field(default_factory=list)
    """Ids of the requirements this one builds on; a requirement nothing depends on is a leaf."""


@dataclass
class Change:
    requirement: str
    before: str
    after: str
    source: str
    evidence: str
    time: float = field(default_factory=time.time)


class TaskState:
    """Requirements, values and verified evidence of one run; see the module docstring for the
    rules."""

    def __init__(
        self,
        instruction: str,
        requirements: list[Requirement],
        *,
        origin: str = "model",
        note: str = "",
        run_dir: Path | None = None,
    ):
        self.instruction = instruction
        self.requirements = requirements
        self.origin = origin
        """`model` (parsed from the model's answer) or `fallback` (the whole instruction, one
        requirement)."""
        self.note = note
        self.values: dict[str, str] = {}
        self.notes: list[str] = []
        """What the user answered (OSWorld 2.0's ask_user): it holds for the rest of the task."""
        self.evidence: list[dict] = []
        self.listeners: list[Callable[[list[Requirement]], None]] = []
        self.path = Path(run_dir) / STATE_FILE if run_dir else None
        self._newly_verified: list[Requirement] = []
        self.last_verdicts: dict[str, bool | None] = {}
        """Each stored probe's answer at the last boundary check (None: it could not decide)."""

    # -- construction -----------------------------------------------------------------------------

    @classmethod
    def initialize(
        cls, instruction: str, model, *, run_dir: Path | None = None, scope=None, seen=None
    ) -> TaskState:
        """Ask `model` (one tool-less JSON request) for the requirements; fall back to the
        instruction. `scope` (a `RunScope`) counts and records the request; `seen` (with `text`
        and `images`, StructAgent's initial screenshot and accessibility tree) is shown too."""
        from harness.control.jsonask import JsonAsker, prompt

        asker = JsonAsker(model, scope, agent="task-state", main=False)
        shown = f"\n\n{seen.text}" if seen is not None and seen.text else ""
        try:
            parsed, error = asker.ask(
                prompt("task_state.md"),
                f"<instruction>\n{instruction}\n</instruction>{shown}",
                parse_requirements,
                "task_state",
                images=tuple(seen.images) if seen is not None else (),
            )
        except StateActError as exc:
            parsed, error = None, f"the model call failed: {exc}"
        if parsed:
            requirements, dropped = parsed
            state = cls(
                instruction, requirements, origin="model", note="; ".join(dropped), run_dir=run_dir
            )
        else:
            fallback = [Requirement("r1", instruction.strip())]
            state = cls(
                instruction,
                fallback,
                origin="fallback",
                note=f"requirements not parsed: {error}",
                run_dir=run_dir,
            )

        state.values = {path: "named in the instruction" for path in named_paths(instruction)}
        state._write({"type": "init", **state.snapshot()})
        record = scope.record if scope is not None else None
        if record is not None:
            record.append(
                "task_state",
                agent="harness",
                origin=state.origin,
                note=state.note,
                requirements=[asdict(r) for r in state.requirements],
            )
        return state

    @classmethod
    def load(cls, run_dir: Path) -> TaskState | None:
        """The state as `state.jsonl` last recorded it, or None when there is none."""
        path = Path(run_dir) / STATE_FILE
        if not path.exists():
            return None
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut short by a kill
        init = next((line for line in lines if line.get("type") == "init"), None)
        if init is None:
            return None
        requirements = [Requirement(**r) for r in init["requirements"]]
        state = cls(
            init["instruction"],
            requirements,
            origin=init["origin"],
            note=init.get("note", ""),
            run_dir=run_dir,
        )
        state.values = dict(init.get("values", {}))
        by_id = {r.id: r for r in requirements}
        for line in lines:
            if line.get("type") == "change" and line["requirement"] in by_id:
                requirement = by_id[line["requirement"]]
                requirement.status, requirement.source, requirement.evidence = (
                    line["after"],
                    line["source"],
                    line["evidence"],
                )
            elif line.get("type") == "value":
                state.values[line["name"]] = line["value"]
            elif line.get("type") == "note":
                state.notes.append(line["text"])
        return state

    def snapshot(self) -> dict:
        return {
            "instruction": self.instruction,
            "origin": self.origin,
            "note": self.note,
            "requirements": [asdict(r) for r in self.requirements],
            "values": dict(self.values),
        }

    # -- what the agent sees ----------------------------------------------------------------------

    def render(self) -> str:
        lines = [
            "<task-state>",
            "Requirements (an independent check sets these; your own claims do not):",
        ]
        for r in self.requirements:
            why = f" — {r.source}: {r.evidence[:160]}" if r.evidence and r.status != PENDING else ""
            lines.append(f"- [{r.id}] {r.status}: {r.text}{why}")
        if self.values:
            lines.append(
                "Known values: "
                + "; ".join(f"{k} = {v}" for k, v in list(self.values.items())[:20])
            )
        if self.notes:
            lines.append("Notes (the user's answers; they hold for the whole task):")
            lines += [f"- {note}" for note in self.notes[-KEPT_NOTES:]]
        lines.append("</task-state>")
        return "\n".join(lines)

    @property
    def done(self) -> bool:
        return all(r.status == VERIFIED for r in self.requirements)

    def leaves(self) -> list[Requirement]:
        """The requirements nothing else depends on: what a finished task must have verified."""
        needed = {rid for r in self.requirements for rid in r.depends_on}
        return [r for r in self.requirements if r.id not in needed]

    def refuted_leaves(self) -> list[Requirement]:
        """Leaves not VERIFIED whose stored probe answered False at the last check: what a finish
        must not pass. A probe that could not decide leaves the requirement to the gate's verdict
        (as StructAgent's uncertain verifier falls back to the model), and a probe-less one only
        the gate can verify."""
        return [
            r
            for r in self.leaves()
            if r.status != VERIFIED and self.last_verdicts.get(r.id) is False
        ]

    # -- verifier entry points (the only ways a status changes)
    # -------------------------------------

    def apply_gate_decision(self, decision, gate_probes: list[dict], sandbox) -> list[str]:
        """A finish-gate round decided; re-run the stored probes (reusing identical gate probes)
        and apply the verdict. Returns the gaps of stored probes that failed, so the gate can
        fail closed."""
        results = self._run_stored_probes(sandbox, reuse=gate_probes)
        gaps = [
            f"requirement {rid} ({self._get(rid).text[:80]}): {evidence}"
            for rid, (v, evidence) in results.items()
            if v is False
        ]
        passed = decision.passed is True and not gaps
        for requirement in self.requirements:
            verdict, evidence = results.get(requirement.id, (None, ""))
            if verdict is not None:
                self._decide(requirement, verdict, evidence, "probe at the finish gate")
            elif passed:
                self._decide(
                    requirement, True, "the gate accepted the finished state", "gate verdict"
                )
        for path in _changed_paths(gate_probes):
            self.set_value(path, "confirmed by a gate probe", "gate")
        self._flush()
        return gaps

    def check_boundary(self, sandbox, source: str) -> list[Change]:
        """Re-run every stored probe (after a subagent or an action node returned)."""
        before = len(self.evidence)
        results = self._run_stored_probes(sandbox)
        self.last_verdicts = {rid: verdict for rid, (verdict, _) in results.items()}
        for rid, (verdict, evidence) in results.items():
            if verdict is not None:
                self._decide(self._get(rid), verdict, evidence, source)
        self._flush()
        return [
            Change(**{k: e[k] for k in ("requirement", "before", "after", "source", "evidence")})
            for e in self.evidence[before:]
            if e["before"] != e["after"]
        ]

    def commit(self, rid: str, verdict: bool, evidence: str, source: str) -> None:
        """A verifier's decision on one requirement (StructAgent's per-subgoal verifier): True
        verifies it, False invalidates it when it was VERIFIED; listeners hear of new ones."""
        self._decide(self._get(rid), verdict, evidence, source)
        self._flush()

    def set_value(self, name: str, value: str, source: str) -> None:
        if self.values.get(name) == value:
            return
        self.values[name] = value
        self._write(
            {"type": "value", "name": name, "value": value, "source": source, "time": time.time()}
        )

    def add_note(self, text: str, source: str) -> None:
        self.notes.append(text)
        self._write({"type": "note", "text": text, "source": source, "time": time.time()})

    # -- internals --------------------------------------------------------------------------------

    def _run_stored_probes(
        self, sandbox, reuse: list[dict] = ()
    ) -> dict[str, tuple[bool | None, str]]:
        answered = {
            json.dumps(p["spec"], sort_keys=True): (p["verdict"], p["evidence"]) for p in reuse
        }
        results = {}
        with ReadOnlyView(sandbox) as view:  # the live sandbox: programs run in a frozen copy
            for requirement in self.requirements:
                if not requirement.probe:
                    continue
                typed = validate_probe(requirement.probe)
                key = json.dumps(typed.model_dump(), sort_keys=True)
                if key in answered:
                    results[requirement.id] = answered[key]
                    continue
                try:
                    outcome = view.run(typed)
                    results[requirement.id] = (outcome.verdict, outcome.evidence[:EVIDENCE_CHARS])
                except (ToolError, StateActError, OSError) as exc:
                    results[requirement.id] = (None, f"the probe could not run: {exc}")
        return results

    def _decide(self, requirement: Requirement, verdict: bool, evidence: str, source: str) -> None:
        before = requirement.status
        if verdict:
            after = VERIFIED
        else:
            after = INVALIDATED if before == VERIFIED else before
        entry = {
            "requirement": requirement.id,
            "before": before,
            "after": after,
            "source": source,
            "evidence": evidence[:EVIDENCE_CHARS],
            "verdict": verdict,
        }
        self.evidence.append(entry)
        if after == before and requirement.evidence == entry["evidence"]:
            return
        requirement.status, requirement.source, requirement.evidence = (
            after,
            source,
            entry["evidence"],
        )
        if after != before:
            self._write({"type": "change", **entry, "time": time.time()})
            log.info("requirement %s: %s -> %s (%s)", requirement.id, before, after, source)
            if after == VERIFIED:
                self._newly_verified.append(requirement)

    def _flush(self) -> None:
        verified, self._newly_verified = self._newly_verified, []
        if not verified:
            return
        for listener in self.listeners:
            try:
                listener(verified)
            except StateActError as exc:  # a failed snapshot must not undo the verifier's decision
                log.warning("milestone listener failed: %s", exc)

    def _get(self, rid: str) -> Requirement:
        return next(r for r in self.requirements if r.id == rid)

    def _write(self, line: dict) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, default=str) + "\n")


def parse_requirements(value) -> tuple[list[Requirement], list[str]]:
    """Requirements from the model's JSON list; probes that fail validation are dropped and
    named."""
    if isinstance(value, dict) and isinstance(value.get("requirements"), list):
        value = value["requirements"]
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty JSON list of requirements")
    requirements, dropped = [], []
    for index, item in enumerate(value[:MAX_REQUIREMENTS], start=1):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("text"), str)
            or not item["text"].strip()
        ):
            raise ValueError(f"requirement {index} needs a non-empty `text` string")
        probe = item.get("probe")
        if probe is not None:
            try:
                probe = validate_probe(probe).model_dump(exclude_none=False)
            except ToolError as exc:
                dropped.append(f"r{index}: probe dropped ({exc})")
                probe = None
        requirements.append(
            Requirement(f"r{index}", item["text"].strip(), probe, depends_on=_earlier(item, index))
        )
    return requirements, dropped


def _earlier(item: dict, index: int) -> list[str]:
    """The `depends_on` ids that name an earlier requirement (anything else is ignored)."""
    named = item.get("depends_on")
    if not isinstance(named, list):
        return []
    earlier = {f"r{n}" for n in range(1, index)}
    return sorted({rid for rid in named if isinstance(rid, str) and rid in earlier})


def _changed_paths(gate_probes: list[dict]) -> list[str]:
    return [
        p["spec"]["path"] for p in gate_probes if p.get("verdict") is True and p["spec"].get("path")
    ][:20]
