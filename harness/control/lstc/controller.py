"""The `lstc` control mode (LocalLSTC, §3.2 and Appendix D), tuned for small local models over the
OpenAI-compatible API. One step of the algorithm:

1. L2S (§3.2.1): the planner reads the long-term control state C_t = (subgoal g_t, its evidence
   E_t, feedback f_t), the current screenshot (downscaled) when the run has a screen, and proposes
   up to 3 candidates (a subgoal and ordered actions), choosing one (`state.py`). Without L2S
   (`--lstc-without l2s`) it sees the task and the last step only.
2. Execution boundary (§3.2.2): each action is checked against its repeats before it runs
   (`suppress.py`, the paper's 3/5/3 thresholds) and runs on its channel: bash, python (software
   API), the grounded GUI, or WAIT (`channels.py`); `done` and `infeasible` are the runtime's.
3. S2L (§3.2.3): Step Abstraction turns each outcome into one evidence line, seeing for a GUI
   action the changed region (50 px margin) and the file diff (`abstract.py`, `region.py`);
   state assignment routes the step (finish > error > stall > advance > continue): a proposed
   subgoal is adopted only when its step shows an effect, else the persistent one is kept. Without
   S2L it is adopted before execution, whatever happens.
4. Context refinement on an evidence-backed advance once `refine_min` steps are unsummarized, at
   the latest after `refine_max` (Appendix D.6).
5. Finish: the finish gate when on; else Final Verification (`verify.py`, Appendix D.7).
Answers are parsed strictly, with up to 3 repairs naming the error.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import asdict

from harness.control.stall import StallDetector, StallRouter, StallSignal, fingerprint, stop_run
from harness.kernel.core import BudgetExceeded, Finished
from harness.kernel.loop import check_run_budgets
from harness.kernel.records import load_events

from ..finish import finish_review, open_task_state
from ..jsonask import PROMPTS, JsonAsker, prompt
from ..memory import with_lessons
from ..registry import control_mode
from .abstract import abstract_step
from .ask import ASK_TOOL, ask, ask_user_tool
from .channels import Channels
from .gui import GUI_TOOLS
from .region import scaled
from .state import TOOLS, LongTermState, parse_commitment
from .step import StepAbstraction
from .suppress import RepeatGuard
from .verify import FinalVerification

log = logging.getLogger(__name__)
APP_NAME = re.compile(r"[a-z0-9_]{1,40}")

__all__ = ["LongTermState", "LstcController", "TOOLS", "abstract_step", "parse_commitment"]


class LstcController:
    """Runs one task under long/short-term control."""

    def __init__(self, context, review, task_state=None):
        self.context = context
        self.instruction = with_lessons(context)
        self.config = config = context.config
        self.settings = config.lstc
        self.record = context.record
        self.stats = context.stats
        self.review = review
        self.task_state = task_state
        retries = self.settings.repair_retries
        self.ask = JsonAsker(context.model, context, agent="lstc", retries=retries)
        self.state = LongTermState()
        self.channels = Channels(context)
        self.user = ask_user_tool(context)  # None: the task does not let the agent ask
        self.tools = TOOLS + ((ASK_TOOL,) if self.user else ()) + self.channels.gui_tools
        self.guard = RepeatGuard(self.channels.gui_tools)
        self.abstraction = StepAbstraction(context, self.channels.gui is not None)
        self.verification = FinalVerification(context, retries)
        stall = config.stall.model_copy(update={"no_progress_turns": self.settings.no_change_steps})
        self.detector = StallDetector(stall) if config.stall.enabled else None
        self.router = StallRouter(self.record, ("feedback", "replan", "stop"), agent="lstc")
        self.first_screen: bytes | None = None
        self.seen_outputs: set[str] = set()
        self.advanced = False
        self.domain_notes = domain_notes(getattr(context.task, "related_apps", []))
        self.counts = Counter()
        """Steps, advances, kept subgoals, suppressed actions, refinements, verifications."""

    def run(
        self, resume: bool = False, since_event_index: int | None = None
    ) -> Finished | BudgetExceeded:
        if resume:
            self._restore(-1 if since_event_index is None else since_event_index)
        try:
            while True:
                self._check_budgets()
                self._step()
        except (Finished, BudgetExceeded) as end:
            self._record("lstc_end", status=end.status, message=end.message)
            if self.context.outcome is not None:
                self.context.outcome.control_stats = {"lstc": dict(self.counts)}
            return end

    def _step(self) -> None:
        commitment, error = self._plan()
        self.state.steps += 1
        self.counts["steps"] += 1
        self.state.unsummarized += 1
        if commitment is None:
            self.state.status = "error"
            self.state.feedback = (
                f"Your last answer was unusable ({error}). Answer with the JSON object only."
            )
            self._record("lstc_step", commitment=None, error=error, state=asdict(self.state))
            return
        proposed = commitment["subgoal"]
        if not self.settings.s2l:  # w/o S2L: adopted before execution, kept whatever happens
            self._adopt(proposed, [])
            self.guard.clear()
        self.guard.plan(commitment["actions"])
        results = []
        for action in commitment["actions"]:
            outcome = self._act(action)
            results.append(outcome)
            if outcome["route"] != "continue":
                break
        self._assign(proposed, results)
        self._watch_turn()
        self._record("lstc_step", commitment=commitment, results=results, state=asdict(self.state))
        self._maybe_refine()

    def _plan(self) -> tuple[dict | None, str | None]:
        """L2S: the commitment from the long-term state (and the screen), or the short request."""
        l2s = self.settings.l2s
        if l2s:
            user = self.state.render(self.instruction, self.task_state) + self.domain_notes
            system = prompt("lstc_plan.md")
        else:
            user, system = self.state.render_short(self.instruction), prompt("lstc_plan_short.md")
        system += prompt("lstc_gui.md") if self.channels.gui else ""
        system += prompt("lstc_ask_user.md") if self.user else ""
        images = ()
        if l2s and self.settings.planner_screenshot and self.channels.gui is not None:
            screen = self.channels.screen()
            if self.first_screen is None:
                self.first_screen = screen
            images = (scaled(screen, self.settings.screenshot_scale),) if screen else ()
        return self.ask.ask(
            system,
            user,
            lambda v: parse_commitment(v, self.settings.max_actions_per_step, self.tools),
            "commit",
            images=images,
        )

    def _act(self, action: dict) -> dict:
        tool, command = action["tool"], str(action.get("input") or "")
        if tool == "infeasible":
            raise Finished("infeasible", command or "the model judged the task infeasible")
        if tool == "done":
            return self._finish(command)
        shown = {"tool": tool, "input": command}
        refusal = self.guard.refuse(tool, command, self.channels.state_key())
        if self.settings.suppression and refusal:
            self._suppressed(tool, command, refusal)
            return {**shown, "route": "stall", "refused": True}
        self.stats.tool_uses += 1
        if tool == ASK_TOOL:
            outcome = ask(self.user, command, self.state)
        else:
            outcome = self.channels.act(tool, command)
        self._record(
            "lstc_action", tool=tool, input=command, ok=outcome.ok, output=outcome.output[:4000]
        )
        self.guard.ran(tool, command, outcome.output, self.channels.state_key())
        new_output = outcome.output not in self.seen_outputs
        self.seen_outputs.add(outcome.output)
        evidence, changed = self.abstraction.abstract(self.state.subgoal, tool, command, outcome)
        if changed is None:  # no model judgement: a file, the screen or new output is an effect
            screen_changed = outcome.after is not None and outcome.after != outcome.before
            changed = outcome.ok and bool(outcome.diff or screen_changed or new_output)
        self.state.recent = [*self.state.recent, evidence][-4:]
        result = {**shown, "ok": outcome.ok, "changed": changed, "evidence": evidence}
        if self.detector is not None:
            screen = f"\n[screen {fingerprint(outcome.after.hex())}]" if outcome.after else ""
            seen = outcome.output + screen
            signal = self.detector.observe_action({"name": tool, "input": command}, seen)
            if signal:
                self._stalled(signal)
                return {**result, "route": "stall"}
        if not outcome.ok:
            self.state.status = "error"
            self.state.feedback = (
                f"`{command[:80]}` failed: {outcome.output[-600:]}. Repair it or take another "
                "approach."
            )
            return {**result, "route": "error"}
        return {**result, "route": "continue"}

    def _assign(self, proposed: str, results: list[dict]) -> None:
        """S2L state assignment: finish > error > stall > advance > continue."""
        evidence = [r["evidence"] for r in results if r.get("evidence")]
        self.state.recent = evidence[-4:] or self.state.recent
        routes = {r["route"] for r in results}
        new = proposed.lower() not in ("continue", self.state.subgoal.lower())
        progressed = any(r.get("changed") for r in results)
        if not self.settings.s2l or "error" in routes or "stall" in routes:
            self._append_evidence(evidence)
            return
        if new and progressed:  # advance: the step's evidence supports the proposed subgoal
            self.counts["advances"] += 1
            self._adopt(proposed, evidence)
            self.guard.clear(keep=[(r["tool"], r["input"]) for r in results])
            self.state.feedback = "The new subgoal is adopted. Continue it or verify it."
            return
        self._append_evidence(evidence)
        self.state.status = "continue"
        if new:
            self.counts["subgoal_kept"] += 1
            self.state.feedback = (
                f"The proposed subgoal {proposed[:120]!r} was not adopted: its step showed no "
                f"effect. The subgoal is still {self.state.subgoal or '(none)'!r}."
            )
        else:
            self.state.feedback = "The actions ran. Continue, verify, or start the next subgoal."

    def _adopt(self, subgoal: str, evidence: list[str]) -> None:
        if subgoal.lower() in ("continue", self.state.subgoal.lower()) and self.state.subgoal:
            self.state.status = "continue"
            return
        if self.state.subgoal:  # the finished subgoal's evidence is summarized into one line
            last = self.state.evidence[-1] if self.state.evidence else "no evidence"
            self.state.done_subgoals.append(f"{self.state.subgoal} ({last[:120]})")
        self.state.subgoal, self.state.status = subgoal, "advance"
        self.state.evidence = evidence[-self.settings.evidence_items :]
        self.advanced = True
        if self.detector is not None:
            self.detector.progressed()

    def _append_evidence(self, evidence: list[str]) -> None:
        self.state.evidence = [*self.state.evidence, *evidence][-self.settings.evidence_items :]

    def _watch_turn(self) -> None:
        if self.detector is None:
            return
        signal = self.detector.observe_turn(self.channels.state_key())
        if signal and self.state.status != "stall":
            self._stalled(signal)
        elif not signal and self.detector.sustained_progress():
            self.router.calm("files changed over several steps in a row")

    def _maybe_refine(self) -> None:
        """Context refinement on an evidence-backed advance (min steps) or at the max interval."""
        advanced, self.advanced = self.advanced, False
        if not self.settings.refinement:
            return
        pending = self.state.unsummarized
        if (
            advanced and pending >= self.settings.refine_min
        ) or pending >= self.settings.refine_max:
            self._refine()

    def _refine(self) -> None:
        value, error = self.abstraction.refine(self.state.render(self.instruction))
        self.state.unsummarized = 0
        self.counts["refinements"] += 1
        if value is None:
            self._record("lstc_refine", error=error)
            return
        self.state.summary = value["summary"]
        self.state.evidence = value["evidence"]
        self.state.done_subgoals = self.state.done_subgoals[-2:]
        self._record("lstc_refine", summary=value["summary"], evidence=value["evidence"])

    def _suppressed(self, tool: str, command: str, refusal: str) -> None:
        self.state.status = "stall"
        text = f"`{' '.join(command.split())[:80]}` ({tool}): {refusal}"
        if text not in self.state.suppressed_text:
            self.state.suppressed_text.append(text[:160])
        self.state.feedback = (
            f"Refused before it ran: {text}, and nothing changed since. Choose a different action."
        )
        self._record("lstc_suppressed", tool=tool, input=command, reason=refusal)
        self.counts["suppressed"] += 1
        if self.detector is not None:
            signal = StallSignal("suppressed", 1, f"{text}; the state has not changed since")
            if self.router.route(signal) == "stop":
                raise stop_run(signal)

    def _stalled(self, signal) -> None:
        response = self.router.route(signal)
        self.state.status = "stall"
        if signal.action and signal.action not in self.state.suppressed:
            self.state.suppressed.append(signal.action)
            self.state.suppressed_text.append(signal.detail[:160])
        if response == "feedback":
            self.state.feedback = (
                f"No progress: {signal.detail}. Do not repeat it; use a different action."
            )
        elif response == "replan":
            self.state.done_subgoals.append(f"{self.state.subgoal} (abandoned: it stalled)")
            self.state.subgoal, self.state.evidence = "", []
            self.state.feedback = (
                f"Stalled again ({signal.detail}). Choose a new subgoal and a different method."
            )
        else:
            raise stop_run(signal)

    def _finish(self, summary: str) -> dict:
        self.state.status = "finish"
        if self.review is not None:  # the gate (raises at its last round), or the leaf guard alone
            rejection = self.review(summary or self.state.subgoal)
            if rejection is not None:
                return self._rejected(f"Final verification failed. {rejection}")
            if self.config.gate.enabled:
                raise Finished("completed", summary)
        if not self.settings.final_verification:  # w/o Final Verification: DONE is taken
            raise Finished("completed", summary)
        latest = self.channels.screen()
        screens = tuple(
            scaled(png, self.settings.screenshot_scale)
            for png in (self.first_screen, latest)
            if png is not None
        )
        passed, missing = self.verification.check(self.instruction, self.state, summary, screens)
        self._record("lstc_final_verification", passed=passed, missing=missing)
        self.counts["final_verifications"] += 1
        if passed:
            raise Finished("completed", summary)
        return self._rejected(f"Final Verification: FAIL. Not yet shown: {missing}")

    def _rejected(self, feedback: str) -> dict:
        self.state.status, self.state.feedback = "stall", feedback
        return {"tool": "done", "route": "stall", "accepted": False}

    def _check_budgets(self) -> None:
        loop = self.config.loop
        if self.state.steps >= loop.max_turns:
            raise BudgetExceeded("turn_limit", f"lstc reached its {loop.max_turns}-step limit")
        check_run_budgets(loop, self.stats)

    def _restore(self, since: int) -> None:
        """Continue from the last recorded step's state, re-running the actions recorded after
        `since` (the milestone the sandbox started from; -1 for a freshly set-up sandbox)."""
        events = load_events(self.record.dir)
        steps = [e for e in events if e["event"] == "lstc_step" and e.get("state")]
        if steps:
            self.state = LongTermState(**steps[-1]["state"])
        replayed = 0
        for index, event in enumerate(events):
            # GUI actions are not replayed: a point on an old screen may mean something else now;
            # nor is a question: its answer is in the restored state
            replayable = event.get("tool") not in (*GUI_TOOLS, ASK_TOOL)
            if event["event"] == "lstc_action" and index > since and replayable:
                self.channels.execute(event["tool"], event["input"])
                replayed += 1
        self._record("resumed", replayed_calls=replayed, since_event_index=since)

    def _record(self, event: str, **data) -> None:
        if self.record is not None:
            self.record.append(event, agent="lstc", **json.loads(json.dumps(data, default=str)))


def domain_notes(apps: list[str]) -> str:
    """The planner's domain notes (L2S's "domain skills"): one short file per application the task
    names in `related_apps` (`harness/prompts/lstc_domains/`); "" when none is known."""
    names = [
        app for app in dict.fromkeys(apps) if (PROMPTS / "lstc_domains" / f"{app}.md").is_file()
    ]
    notes = [prompt(f"lstc_domains/{app}.md").strip() for app in names]
    return "\n\nDOMAIN NOTES:\n" + "\n".join(notes) if notes else ""


@control_mode("lstc")
class LstcMode:
    """`--control lstc`: `LstcController`'s steps; `finish` goes through `finish_review`."""

    def run(self, context) -> Finished | BudgetExceeded:
        task_state = open_task_state(context)
        review = finish_review(context, task_state)
        controller = LstcController(context, review, task_state)
        return controller.run(resume=context.resume, since_event_index=context.since_event_index)
