"""The `lstc` control mode (LocalLSTC), tuned for small local models over the OpenAI-compatible API.

Long-term control state persists across steps: the active subgoal, evidence aligned with it,
runtime feedback and a status (continue, advance, error, stall, finish). Each step, one short
tool-less JSON request turns that state into a short commitment: up to three candidate proposals,
each a subgoal with an ordered list of actions, and the index of the best. The harness executes
the chosen actions, abstracts each outcome into one evidence line by a model call (Step
Abstraction, `abstract.py`), and routes: a new subgoal advances, a failed action is an error
with its output as feedback, a repeated action or 3 steps changing nothing (no file, no screen,
no new output) are a stall (its equivalents are suppressed, then a replan is forced, then the run
ends as `stalled`), and `done` goes to final verification (the finish gate). With `--grounder`,
GUI actions name what to click and a visual grounder finds it (`gui.py`). Every
`refine_every` steps the long-term state is rewritten shorter (context refinement). Answers are
parsed strictly, with up to 3 repairs naming the error.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field

from harness.control.stall import StallDetector, StallRouter, fingerprint, stop_run
from harness.kernel.core import BudgetExceeded, Finished, StateActError, ToolError
from harness.kernel.loop import check_run_budgets
from harness.kernel.records import load_events
from harness.tools import PythonTool
from sandboxes.toolbox.protocol import BashRun, FsChanged
from sandboxes.typed import run

from ..finish import finish_review, open_task_state
from ..jsonask import JsonAsker, prompt
from ..memory import with_lessons
from ..registry import control_mode
from .abstract import (
    abstract_step,
    abstraction_request,
    parse_abstraction,
    parse_refinement,
)
from .gui import GUI_TOOLS, Grounder, GuiChannel, grounder_options

log = logging.getLogger(__name__)

STATUSES = ("continue", "advance", "error", "stall", "finish")
TOOLS = ("bash", "python", "done", "infeasible")
MAX_CANDIDATES = 3
SESSION = "lstc"

__all__ = ["LongTermState", "LstcController", "abstract_step", "parse_commitment"]


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
        ]
        if avoid:
            parts.append(f"DO NOT REPEAT (no effect before):\n{avoid}")
        if task_state is not None:
            parts.append(task_state.render())
        return "\n\n".join(parts)


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
        if action["tool"] not in ("done", "infeasible") and (
            not isinstance(action.get("input"), str) or not action["input"].strip()
        ):
            raise ValueError(
                f"action {n} ({action['tool']}) needs `input`: the command, code, element or "
                "text as a string"
            )
    return {"subgoal": chosen["subgoal"].strip(), "actions": actions, "candidates": len(candidates)}


class LstcController:
    """Runs one task under long/short-term control."""

    def __init__(self, context, review, task_state=None):
        self.instruction = with_lessons(context)
        self.sandbox = sandbox = context.sandbox
        self.config = config = context.config
        self.settings = config.lstc
        self.record = record = context.record
        self.stats = stats = context.stats
        self.started_at = context.started_at
        self.review = review
        self.task_state = task_state
        self.ask = JsonAsker(
            context.model, context, agent="lstc", retries=self.settings.repair_retries
        )
        self.state = LongTermState()
        self.python = PythonTool(sandbox, timeout_s=self.settings.action_timeout_s)
        stall = config.stall.model_copy(update={"no_progress_turns": self.settings.no_change_steps})
        self.detector = StallDetector(stall)
        self.abstractor = JsonAsker(
            context.model,
            context,
            agent="lstc-abstract",
            retries=self.settings.repair_retries,
            main=False,
        )
        self.gui = None
        self.tools = TOOLS
        if self.settings.grounder:
            options = grounder_options(
                self.settings.grounder, config.model_options, self.settings.grounder_base_url
            )
            grounder = Grounder(
                self.settings.grounder, options, stats, self.settings.grounder_coordinates
            )
            self.gui = GuiChannel(sandbox, tuple(config.sandbox.display_size), grounder, stats)
            self.tools = TOOLS + GUI_TOOLS
        self.changed: dict[str, tuple] = {}
        self.router = StallRouter(record, ("feedback", "replan", "stop"), agent="lstc")
        self.done_refused = False

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
            return end

    def _step(self) -> None:
        user = self.state.render(self.instruction, self.task_state)
        system = prompt("lstc_plan.md") + (prompt("lstc_gui.md") if self.gui else "")
        commitment, error = self.ask.ask(
            system,
            user,
            lambda v: parse_commitment(v, self.settings.max_actions_per_step, self.tools),
            "commit",
        )
        self.state.steps += 1
        if commitment is None:
            self.state.status, self.state.feedback = (
                "error",
                f"Your last answer was unusable ({error}). Answer with the JSON object only.",
            )
            self._record("lstc_step", commitment=None, error=error, state=asdict(self.state))
            return
        self._route_subgoal(commitment["subgoal"])
        results = []
        for action in commitment["actions"]:
            outcome = self._act(action)
            results.append(outcome)
            if outcome["route"] != "continue":
                break
        else:
            if self.state.status in ("error", "stall"):
                self.state.status = "continue"
            self.state.feedback = "The actions ran. Continue, verify, or start the next subgoal."
        signal = self.detector.observe_turn(self._state_key())
        if signal and self.state.status != "stall":
            self._stalled(signal)
        elif not signal and self.detector.sustained_progress():
            self.router.calm("files changed over several steps in a row")
        self._record("lstc_step", commitment=commitment, results=results, state=asdict(self.state))
        every = self.settings.refine_every
        if every and self.state.steps % every == 0:
            self._refine()

    def _route_subgoal(self, subgoal: str) -> None:
        if subgoal.lower() in ("continue", self.state.subgoal.lower()) and self.state.subgoal:
            self.state.status = "continue"
            return
        if (
            self.state.subgoal
        ):  # advance: the finished subgoal's evidence is summarized into one line
            last = self.state.evidence[-1] if self.state.evidence else "no evidence"
            self.state.done_subgoals.append(f"{self.state.subgoal} ({last[:120]})")
        self.state.subgoal, self.state.evidence, self.state.status = subgoal, [], "advance"
        self.detector.progressed()

    def _act(self, action: dict) -> dict:
        tool, command = action["tool"], str(action.get("input") or "")
        if tool == "infeasible":
            raise Finished("infeasible", command or "the model judged the task infeasible")
        if tool == "done":
            return self._finish(command)
        key = fingerprint({"name": tool, "input": command})
        if key in self.state.suppressed:
            self.state.status = "stall"
            self.state.feedback = (
                f"Refused: `{command[:80]}` repeated before without any effect. Choose a "
                "different action."
            )
            return {"tool": tool, "input": command, "route": "stall", "refused": True}
        self.stats.tool_uses += 1
        ok, output = self._execute(tool, command)
        diff = self._file_diff()
        screen = self.gui.last_png if self.gui and tool in GUI_TOOLS and ok else None
        self._record("lstc_action", tool=tool, input=command, ok=ok, output=output[:4000])
        evidence = self._abstract(tool, command, ok, output, diff, screen)
        self.state.evidence = [*self.state.evidence, evidence][-self.settings.evidence_items :]
        # a GUI action's observation is the screen it left, so clicking without effect repeats
        seen = output + (f"\n[screen {fingerprint(screen.hex())}]" if screen else "")
        signal = self.detector.observe_action({"name": tool, "input": command}, seen)
        if signal:
            self._stalled(signal)
            return {"tool": tool, "input": command, "route": "stall", "ok": ok}
        if not ok:
            self.state.status = "error"
            self.state.feedback = (
                f"`{command[:80]}` failed: {output[-600:]}. Repair it or take another approach."
            )
            return {"tool": tool, "input": command, "route": "error", "ok": False}
        return {"tool": tool, "input": command, "route": "continue", "ok": True}

    def _abstract(self, tool, command, ok, output, diff, screen) -> str:
        """Step Abstraction: an evidence line by a model call, else the output's first/last."""
        fallback = abstract_step(tool, command, ok, output)
        if self.settings.abstraction != "model":
            return fallback
        request = abstraction_request(self.state.subgoal, tool, command, ok, output, diff)
        try:
            value, _ = self.abstractor.ask(
                prompt("lstc_abstract.md"),
                request,
                parse_abstraction,
                f"abstract step {self.state.steps}",
                images=(screen,) if screen else (),
            )
        except StateActError as exc:
            if not screen:
                raise
            # a text-only model refuses the screenshot: the step is abstracted from its output
            self._record("lstc_abstract_error", error=str(exc)[:500])
            return fallback
        if value is None:
            return fallback
        effect = "" if value["changed"] else " (no effect)"
        return f"{tool} `{' '.join(command.split())[:60]}` -> {value['evidence']}{effect}"

    def _file_diff(self) -> list[str]:
        """Files changed since the previous action (the state diff the abstraction sees)."""
        try:
            listed = run(self.sandbox, FsChanged(self.started_at, limit=500)).paths
        except (ToolError, StateActError):
            return []
        now = {p["path"]: (p["mtime"], p["size"]) for p in listed}
        diff = [
            f"{path} ({size} bytes)"
            for path, (mtime, size) in now.items()
            if self.changed.get(path) != (mtime, size)
        ]
        self.changed = now
        return diff

    def _refine(self) -> None:
        """Context refinement: the long-term state rewritten as a summary plus current evidence."""
        value, error = self.ask.ask(
            prompt("lstc_refine.md"),
            self.state.render(self.instruction),
            parse_refinement,
            "refine",
        )
        if value is None:
            self._record("lstc_refine", error=error)
            return
        self.state.summary = value["summary"]
        self.state.evidence = value["evidence"]
        self.state.done_subgoals = self.state.done_subgoals[-2:]
        self._record("lstc_refine", summary=value["summary"], evidence=value["evidence"])

    def _execute(self, tool: str, command: str) -> tuple[bool, str]:
        if tool in GUI_TOOLS:
            try:
                return True, self.gui.act(tool, command)
            except (ToolError, StateActError) as exc:
                return False, f"{tool} failed: {exc}"
        try:
            if tool == "bash":
                request = BashRun(command, self.settings.action_timeout_s, session=SESSION)
                result = run(self.sandbox, request)
                output = result.output.rstrip("\n")
                if result.timed_out:
                    return False, f"{output}\n[timed out]"
                return result.exit_code == 0, f"{output}\n[exit code {result.exit_code}]"
            result = self.python(code=command)
            return result.error is None, result.error if result.error is not None else result.output
        except ToolError as exc:
            return False, str(exc)

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
        if self.review is not None:
            rejection = self.review(
                summary or self.state.subgoal
            )  # raises Finished when rounds run out
            if rejection is None:
                raise Finished("completed", summary)
            self.state.status, self.state.feedback = (
                "error",
                f"Final verification failed. {rejection}",
            )
            return {"tool": "done", "route": "error", "accepted": False}
        if not self.done_refused:  # without a gate, one verification step must come before the end
            self.done_refused = True
            self.state.status = "error"
            self.state.feedback = (
                "Before finishing, read the result back once with a command that shows it is right."
            )
            return {"tool": "done", "route": "error", "accepted": False}
        raise Finished("completed", summary)

    def _state_key(self) -> str | None:
        """Files changed so far and, with a GUI channel in use, the screen."""
        try:
            changed = run(self.sandbox, FsChanged(self.started_at, limit=500))
        except (ToolError, StateActError):
            return None
        files = [(p["path"], p["mtime"], p["size"]) for p in changed.paths]
        screen = self.gui.last_png if self.gui else None
        return fingerprint([files, fingerprint(screen.hex()) if screen else None])

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
            # GUI actions are not replayed: a point on an old screen may mean something else now
            if event["event"] == "lstc_action" and index > since and event["tool"] not in GUI_TOOLS:
                self._execute(event["tool"], event["input"])
                replayed += 1
        self._record("resumed", replayed_calls=replayed, since_event_index=since)

    def _record(self, event: str, **data) -> None:
        if self.record is not None:
            self.record.append(event, agent="lstc", **json.loads(json.dumps(data, default=str)))


@control_mode("lstc")
class LstcMode:
    """`--control lstc`: `LstcController`'s steps; `finish` goes through `finish_review`."""

    def run(self, context) -> Finished | BudgetExceeded:
        task_state = open_task_state(context)
        review = finish_review(context, task_state)
        controller = LstcController(context, review, task_state)
        return controller.run(resume=context.resume, since_event_index=context.since_event_index)
