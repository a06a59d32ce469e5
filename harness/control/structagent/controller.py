"""The `structagent` control mode: StructAgent's structured workflow (§3.2, Eq. 4).

    s_t --Planner--> g_t --Actor--> tau_t --Verifier--> d_t --Update--> s_{t+1}

1. Initialize: the initializer reads the instruction, a screenshot and the accessibility tree
   (when the run has a screen) and writes typed requirements with their probes (`TaskState`).
2. Plan: the planner reads the unified state (requirements, values, evidence) and picks the next
   subgoal and the requirements it targets; a recovery subgoal, when one is inserted, runs first.
3. Act: a fresh-context actor (bash, Python, editor; a GUI or web specialist and the task's
   `ask_user` when offered) works on the subgoal and reports; the low-level step verifier judges
   each step that can change the screen or files (`step_verifier.py`) and may end it early.
4. Verify: the verifier commits or invalidates requirements on evidence (`verifier.py`).
5. Recover: a target left unverified gets a diagnosis and a targeted subgoal (`recovery.py`).
6. DONE: accepted only when every leaf requirement is VERIFIED, then the narration-blind finish
   gate (when on) has its round, or else the DONE auditor (`auditor.py`); a refused DONE inserts a
   recovery subgoal per blocking leaf, an audit's FAIL goes back to the planner.
"""

from __future__ import annotations

from collections import Counter

from harness.control.task_state import VERIFIED, TaskState
from harness.kernel.core import BudgetExceeded, Finished
from harness.kernel.loop import LoopConfig, ToolLoop, check_run_budgets
from harness.tools import BashTool, EditorTool, PythonTool
from harness.tools.ask_user import ask_user_among
from subagents import DelegateTool, ReportTool, available_specialists

from ..finish import finish_review
from ..jsonask import JsonAsker, prompt
from ..memory import with_lessons
from ..milestones import MilestoneKeeper
from ..registry import control_mode
from .ask import NotedAsk
from .auditor import DoneAuditor
from .observe import observe
from .recovery import MAX_RECOVERIES, blocking_leaves, diagnose, recovery_rate
from .step_verifier import STATUSES, StepVerifier
from .verifier import Subgoal, SubgoalVerifier

RUN_ENDING = ("cost_limit", "time_limit", "script_exhausted")
HISTORY_LINES = 6


def parse_plan(ids: list[str]):
    def check(value) -> dict:
        if not isinstance(value, dict):
            raise ValueError('expected {"subgoal": "...", "targets": [...]} or {"done": true}')
        if isinstance(value.get("infeasible"), str) and value["infeasible"].strip():
            return {"infeasible": value["infeasible"].strip()}
        if value.get("done") is True:
            return {"done": True, "summary": str(value.get("summary", ""))[:2000]}
        if not isinstance(value.get("subgoal"), str) or not value["subgoal"].strip():
            raise ValueError("`subgoal` must be a non-empty string (or answer done / infeasible)")
        targets = value.get("targets", [])
        if not isinstance(targets, list) or any(t not in ids for t in targets):
            raise ValueError(f"`targets` must list requirement ids among {', '.join(ids)}")
        return {"subgoal": Subgoal(value["subgoal"].strip(), list(targets))}

    return check


class StructAgentLoop:
    """One run's planner, actor and verifier around its unified state."""

    def __init__(self, context):
        self.context = context
        self.config = context.config
        self.settings = context.config.structagent
        self.record = context.record
        memory = self.settings.memory
        self.instruction = with_lessons(context) if memory else context.task.instruction
        self.state = self._open_state()
        self.planner = JsonAsker(context.model, context, agent="planner")
        self.verifier = SubgoalVerifier(context, self.state)
        self.step_asker = JsonAsker(context.model, context, agent="step-verifier", main=False)
        self.step_counts: Counter[str] = Counter()
        self.auditor = DoneAuditor(context, self.state)
        self.audits = self.audit_refusals = 0
        self.recovered = 0
        """Recovery subgoals after which their requirement was VERIFIED."""
        self.queue: list[Subgoal] = []
        self.history: list[str] = []
        self.feedback = "Start: choose the first subgoal."
        self.failures: Counter[str] = Counter()
        self.subgoals = 0
        self.refusals = 0
        self.recoveries = 0
        self._review = None

    def _open_state(self) -> TaskState:
        context = self.context
        state = TaskState.load(context.record.dir) if context.resume else None
        if state is None:
            state = TaskState.initialize(
                context.task.instruction,
                context.model,
                run_dir=context.record.dir,
                scope=context,
                seen=observe(context),
            )
        if self.config.task_state.milestones:
            keeper = MilestoneKeeper(context.sandbox, context.record, context.started_at)
            state.listeners.append(keeper)
        return state

    def run(self) -> Finished | BudgetExceeded:
        try:
            while True:
                self._check_budgets()
                subgoal = self.queue.pop(0) if self.queue else self._plan()
                if subgoal is not None:
                    self._attempt(subgoal)
        except (Finished, BudgetExceeded) as end:
            self._event("structagent_end", status=end.status, message=end.message)
            self._report_stats()
            return end

    def _report_stats(self) -> None:
        requirements = self.state.requirements
        stats = {
            "subgoals": self.subgoals,
            "done_refusals": self.refusals,
            "recoveries": self.recoveries,
            "requirements": len(requirements),
            "verified": sum(r.status == VERIFIED for r in requirements),
            "recovered": self.recovered,
            "recovery_rate": recovery_rate(self.recovered, self.recoveries),
            "steps": {status: self.step_counts[status] for status in STATUSES},
            "audits": self.audits,
            "audit_refusals": self.audit_refusals,
        }
        if self.context.outcome is not None:
            self.context.outcome.control_stats = {"structagent": stats}

    def _plan(self) -> Subgoal | None:
        """The planner's next subgoal; None after a DONE claim it handled."""
        ids = [r.id for r in self.state.requirements]
        history = "\n".join(self.history[-HISTORY_LINES:]) or "(none yet)"
        user = (
            f"<task>\n{self.instruction}\n</task>\n\n{self.state.render()}\n\n"
            f"<recent-subgoals>\n{history}\n</recent-subgoals>\n\n<feedback>\n{self.feedback}\n"
            "</feedback>"
        )
        answer, error = self.planner.ask(
            prompt("structagent_plan.md"), user, parse_plan(ids), f"plan {self.subgoals + 1}"
        )
        if answer is None:
            self.feedback = f"Your last answer was unusable ({error}). Answer with the JSON only."
            return None
        if "infeasible" in answer:
            raise Finished("infeasible", answer["infeasible"])
        if answer.get("done"):
            self._done(answer["summary"])
            return None
        return answer["subgoal"]

    def _attempt(self, subgoal: Subgoal) -> None:
        self.subgoals += 1
        number = self.subgoals
        reported, report, step_end = self._act(number, subgoal)
        result = self.verifier.verify(number, subgoal, report, reported)
        if subgoal.origin.startswith("recovery") and set(subgoal.targets) & set(result.verified):
            self.recovered += 1
        self._event(
            "structagent_subgoal",
            number=number,
            subgoal=subgoal.text,
            origin=subgoal.origin,
            targets=subgoal.targets,
            reported=reported,
            verified=result.verified,
            invalidated=result.invalidated,
            unverified=result.unverified,
            methods=result.methods,
            step_end=step_end,
        )
        self.history.append(
            f"{number}. {subgoal.text[:120]} -> verified {result.verified or 'nothing'}"
            + (f", INVALIDATED {result.invalidated}" if result.invalidated else "")
            + (f", still unverified {result.unverified}" if result.unverified else "")
        )
        blocked = None if reported else report
        self._recover(result.unverified + result.invalidated, blocked, step_end)

    def _recover(self, ids: list[str], blocked: str | None, step_end: str | None = None) -> None:
        """Insert one targeted subgoal per requirement that did not advance (or regressed)."""
        by_id = {r.id: r for r in self.state.requirements}
        inserted = []
        inserted, escalated = [], []
        for rid in dict.fromkeys(ids):
            self.failures[rid] += 1
            recovery = diagnose(by_id[rid], self.failures[rid], blocked, step_end)
            if any(rid in queued.targets for queued in self.queue):
                continue
            diagnosis = recovery.origin.removeprefix("recovery: ")
            if self.failures[rid] > MAX_RECOVERIES:
                escalated.append(f"[{rid}] {diagnosis}: {recovery.text[:200]}")
                diagnosis = f"escalated ({diagnosis})"
            else:
                self.queue.append(recovery)
                self.recoveries += 1
                inserted.append(recovery.text[:160])
            self._event(
                "structagent_recovery", requirement=rid, diagnosis=diagnosis, subgoal=recovery.text
            )
        for rid in [r for r in self.failures if by_id[r].status == VERIFIED]:
            del self.failures[rid]  # it advanced: its count starts again
        parts = [f"Recovery inserted: {'; '.join(inserted)}"] if inserted else []
        if escalated:
            parts.append(
                "Recovery gave up on these; choose another approach: " + "; ".join(escalated)
            )
        self.feedback = (
            " ".join(parts) or "The last subgoal's targets are verified. Choose the next."
        )

    def _act(self, number: int, subgoal: Subgoal) -> tuple[bool, str, str | None]:
        """The actor's attempt: (reported, its report or why it stopped, the step verifier's
        ending status when it ended the subgoal)."""
        targets = "\n".join(
            f"- [{r.id}] {r.text}" for r in self.state.requirements if r.id in subgoal.targets
        )
        seed = (
            f"<task>\n{self.instruction}\n</task>\n\n{self.state.render()}\n\n"
            f"<your-subgoal>\n{subgoal.text}\n\nIt serves:\n{targets or '(the task)'}\n"
            "</your-subgoal>"
        )
        hooks = []
        if self.settings.step_verifier:
            watch = StepVerifier(self.context, subgoal.text, self.step_counts, self.step_asker)
            hooks.append(watch)
        asking = ask_user_among(self.context.extra_tools)
        loop = ToolLoop(
            self.context.model,
            self._actor_tools(asking),
            prompt("structagent_actor.md") + (prompt("structagent_ask_user.md") if asking else ""),
            agent=f"actor-{number}",
            config=LoopConfig(
                max_turns=self.settings.actor_turns,
                max_cost_usd=self.config.loop.max_cost_usd,
                max_wall_s=self.config.loop.max_wall_s,
            ),
            scope=self.context,
            hooks=hooks,
        )
        end = loop.run(seed)
        if isinstance(end, BudgetExceeded) and end.status in RUN_ENDING:
            raise end
        if isinstance(end, Finished) and end.status == "reported":
            return True, end.message, None
        if isinstance(end, Finished) and end.status.startswith("step_"):
            status = end.status.removeprefix("step_")
            said = f"the step verifier ended the subgoal as {status}: {end.message}"
            return status == "complete", said, status
        return False, f"the actor stopped without a report ({end.status}: {end.message})", None

    def _actor_tools(self, asking=None) -> list:
        sandbox = self.context.sandbox
        tools = [BashTool(sandbox, session="actor"), PythonTool(sandbox), EditorTool(sandbox)]
        specialists = [a for a in available_specialists(self.config) if a != "worker"]
        if specialists:
            delegate = DelegateTool(self.context, parent="structagent")
            tools.append(delegate.for_agent("structagent-actor", specialists))
        if asking is not None:  # the task's user (OSWorld 2.0's ASK_USER); answers become notes
            tools.append(NotedAsk(asking, self.state))
        return [*tools, ReportTool()]

    def _done(self, summary: str) -> None:
        """A DONE claim: refused while a leaf is not VERIFIED, else the finish gate's round."""
        structured = self.settings.verifier == "structured"
        if structured:  # the visual and the no-verifier arms judge DONE without probes
            self.state.check_boundary(self.context.sandbox, "check at DONE")
        blocking = blocking_leaves(self.state)
        if blocking:
            self.refusals += 1
            self._event(
                "done_refused", requirements=[r.id for r in blocking], refusal=self.refusals
            )
            if self.refusals >= self.settings.max_done_refusals:
                raise Finished(
                    "done_refused",
                    f"DONE was refused {self.refusals} times; unverified: "
                    + ", ".join(r.id for r in blocking),
                )
            self._recover([r.id for r in blocking], None)
            self.feedback = (
                "DONE refused: these requirements are not VERIFIED: "
                + ", ".join(f"[{r.id}] {r.status}" for r in blocking)
                + ". "
                + self.feedback
            )
            return
        if not self.config.gate.enabled:  # the DONE auditor; its FAIL goes back to the planner
            rejection = self._audit(summary)
            if rejection is None:
                raise Finished("completed", summary)
            self.feedback = f"DONE refused: {rejection[:1500]}. Plan the subgoals that close it."
            return
        if self._review is None:
            guarded = self.state if structured else None
            self._review = finish_review(self.context, guarded) or (lambda _summary: None)
        rejection = self._review(summary)  # raises Finished("gate_rejected") when rounds run out
        if rejection is None:
            raise Finished("completed", summary)
        self.feedback = f"The finish gate rejected DONE: {rejection[:1500]}"
        self.queue.append(Subgoal(f"Fix what the finish gate found: {rejection[:600]}", []))

    def _audit(self, summary: str) -> str | None:
        """With the finish gate off: the DONE auditor's verdict (None passes). A refusal counts as
        a refused DONE, so `max_done_refusals` bounds it as it bounds the structured gate."""
        if not self.settings.auditor:
            return None
        self.audits += 1
        audit = self.auditor.audit(self.audits, summary)
        self._event("done_audit", verdict=audit.verdict, gaps=audit.gaps, audit=self.audits)
        if audit.passed:
            return None
        self.audit_refusals += 1
        self.refusals += 1
        gaps = "; ".join(audit.gaps) or "no gap named"
        if self.refusals >= self.settings.max_done_refusals:
            raise Finished("done_refused", f"the DONE auditor said {audit.verdict}: {gaps}")
        return f"the DONE auditor said {audit.verdict}: {gaps}"

    def _check_budgets(self) -> None:
        loop = self.config.loop
        if self.planner.calls >= loop.max_turns:
            raise BudgetExceeded("turn_limit", f"the planner reached its {loop.max_turns} calls")
        if self.subgoals >= self.settings.max_subgoals:
            raise BudgetExceeded(
                "turn_limit", f"the run used its {self.settings.max_subgoals} subgoals"
            )
        check_run_budgets(loop, self.context.stats)

    def _event(self, event: str, **data) -> None:
        if self.record is not None:
            self.record.append(event, agent="structagent", **data)


@control_mode("structagent")
class StructAgentController:
    """`--control structagent`: `StructAgentLoop`; its DONE goes through `finish_review`."""

    def run(self, context) -> Finished | BudgetExceeded:
        return StructAgentLoop(context).run()
