"""StructAgent's verifier after every subgoal (§3.2 "Verifier", Appendix C "Verification registry").

Structured (default): the requirements' stored probes run again (a determinate answer commits a
requirement or INVALIDATES a VERIFIED one on conflicting evidence); a target still undecided goes to
a model verifier, whose claim a probe it writes overrides (`probe:<kind>`), and which may record
values with their evidence. Visual (`--structagent-verifier visual`): the model verifier judges the
targets from the screenshot alone, no probe runs. Off (`--structagent-without verifier`): the
actor's report commits its targets, the paper's `w/o verifier` arm. A claim of `verified` without
evidence commits nothing: an unprobed requirement needs the verifier's evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gates.probe_view import run_probe_read_only
from gates.probes import validate_probe
from harness.control.task_state import VERIFIED, TaskState
from harness.kernel.core import StateActError, ToolError

from ..jsonask import JsonAsker, prompt
from .observe import observe

REPORT_CHARS = 3000


@dataclass
class Subgoal:
    """One planner (or recovery) decision: what the actor must achieve and which requirements."""

    text: str
    targets: list[str] = field(default_factory=list)
    origin: str = "planner"
    """`planner`, or `recovery: <diagnosis>` for a subgoal recovery inserted."""


@dataclass
class Verification:
    """What one verification changed: ids per outcome and the method per decided target."""

    verified: list[str] = field(default_factory=list)
    invalidated: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    methods: dict[str, str] = field(default_factory=dict)


def parse_decisions(ids: list[str]):
    def check(value) -> dict:
        if not isinstance(value, dict) or not isinstance(value.get("decisions"), list):
            raise ValueError('expected {"decisions": [...], "values": [...]}')
        decisions = {}
        for item in value["decisions"]:
            if not isinstance(item, dict) or item.get("id") not in ids:
                raise ValueError(f"each decision needs an `id`, one of {', '.join(ids)}")
            if item.get("verified") not in (True, False, None):
                raise ValueError("`verified` must be true, false or null")
            if not isinstance(item.get("evidence", ""), str):
                raise ValueError("`evidence` must be a string")
            decisions[item["id"]] = item
        values = value.get("values") or []
        if not isinstance(values, list) or not all(
            isinstance(v, dict) and isinstance(v.get("name"), str) and "value" in v for v in values
        ):
            raise ValueError('`values` must be a list of {"name", "value", "evidence"}')
        return {"decisions": decisions, "values": values[:10]}

    return check


class SubgoalVerifier:
    """Commits (or refuses) each subgoal's progress into the task state."""

    def __init__(self, context, task_state: TaskState):
        self.context = context
        self.state = task_state
        self.mode = context.config.structagent.verifier
        self.ask = JsonAsker(context.model, context, agent="verifier", main=False)

    def verify(self, number: int, subgoal: Subgoal, report: str, reported: bool) -> Verification:
        before = {r.id: r.status for r in self.state.requirements}
        methods: dict[str, str] = {}
        if self.mode == "off":
            for rid in subgoal.targets:
                self.state.commit(rid, reported, report[:300], "actor report (no verifier)")
                methods[rid] = "actor report"
        elif self.mode == "visual":
            self._model(number, subgoal, report, self._targets(subgoal), methods)
        else:
            self.state.check_boundary(self.context.sandbox, f"verifier after subgoal {number}")
            undecided = [
                rid
                for rid in self._targets(subgoal)
                if self.state.last_verdicts.get(rid) is None and self._status(rid) != VERIFIED
            ]
            if undecided:
                self._model(number, subgoal, report, undecided, methods)
        return self._compare(before, subgoal, methods)

    def _targets(self, subgoal: Subgoal) -> list[str]:
        known = {r.id for r in self.state.requirements}
        return [rid for rid in subgoal.targets if rid in known] or sorted(known)

    def _status(self, rid: str) -> str:
        return next(r.status for r in self.state.requirements if r.id == rid)

    def _model(self, number, subgoal: Subgoal, report: str, ids: list[str], methods) -> None:
        visual = self.mode == "visual"
        seen = observe(self.context, a11y=False)
        listed = "\n".join(f"- [{r.id}] {r.text}" for r in self.state.requirements if r.id in ids)
        checks = "" if visual else f"\n\n<checks>\n{self._checks()}\n</checks>"
        user = (
            f"<subgoal>\n{subgoal.text}\n</subgoal>\n\n<targets>\n{listed}\n</targets>\n\n"
            f"<report>\n{report[:REPORT_CHARS]}\n</report>{checks}\n\n{seen.text}"
        )
        system = prompt("structagent_visual.md" if visual else "structagent_verify.md")
        answer, _ = self.ask.ask(
            system,
            user,
            parse_decisions(ids),
            f"verify subgoal {number}",
            images=tuple(seen.images),
        )
        if answer is None:
            return
        for rid, decision in answer["decisions"].items():
            self._decide(rid, decision, methods, allow_probe=not visual)
        for value in answer["values"]:
            evidence = str(value.get("evidence", ""))[:160]
            self.state.set_value(
                value["name"][:200], str(value["value"])[:300], f"verifier: {evidence}"
            )

    def _decide(self, rid: str, decision: dict, methods: dict, allow_probe: bool) -> None:
        evidence = decision.get("evidence", "").strip()
        if allow_probe and isinstance(decision.get("probe"), dict):
            verdict, probe_evidence, kind = self._probe(decision["probe"])
            if verdict is not None:  # a determinate probe overrides the observation judgement
                self.state.commit(rid, verdict, probe_evidence, f"verifier probe:{kind}")
                methods[rid] = f"probe:{kind}"
                return
            methods[rid] = "probe-inconclusive->obs"
        verdict = decision.get("verified")
        if verdict is None or (verdict is True and not evidence):
            methods.setdefault(rid, "undecided")
            return
        source = "visual verifier" if self.mode == "visual" else "model verifier"
        self.state.commit(rid, verdict, evidence, source)
        methods.setdefault(rid, "observation")

    def _probe(self, spec: dict) -> tuple[bool | None, str, str]:
        try:
            typed = validate_probe(spec)
            outcome = run_probe_read_only(typed, self.context.sandbox)
        except (ToolError, StateActError, OSError) as exc:
            return None, f"the probe could not run: {exc}", str(spec.get("kind"))
        return outcome.verdict, outcome.evidence, typed.kind

    def _checks(self) -> str:
        lines = [
            f"- [{r.id}] stored probe: {self.state.last_verdicts.get(r.id)} ({r.evidence[:160]})"
            for r in self.state.requirements
            if r.probe
        ]
        return "\n".join(lines) or "(no stored probes)"

    def _compare(self, before: dict, subgoal: Subgoal, methods: dict) -> Verification:
        result = Verification(methods=methods)
        for requirement in self.state.requirements:
            was, now = before[requirement.id], requirement.status
            if now == VERIFIED and was != VERIFIED:
                result.verified.append(requirement.id)
            elif was == VERIFIED and now != VERIFIED:
                result.invalidated.append(requirement.id)
        result.unverified = [rid for rid in self._targets(subgoal) if self._status(rid) != VERIFIED]
        return result
