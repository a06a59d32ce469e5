"""StructAgent's low-level actor verifier (Appendix C "Actor-loop and boundary verification",
"Low-level verifier"): after each actor step that can change the screen or the files, a model
compares before and after and answers one of complete / continue / no_effect / off_track / stuck.

It never touches the task state (only the boundary verifier commits). Its statuses steer the
actor: `continue` lets it go on; `no_effect` goes back to it as feedback on its next request;
`off_track` and `stuck` end the subgoal early, handed to recovery as a blocked attempt;
`complete` ends the subgoal and the boundary verifier judges it. Before/after are screenshots (with
up to three earlier ones) where the run has a screen, else the files changed during the step; the
step's own output and the last three actions are shown either way. An unusable answer counts as
`continue`, as the paper's parse fallback does.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from harness.kernel.core import Finished, StateActError, ToolError
from harness.kernel.loop import LoopHook
from sandboxes.toolbox.protocol import FsChanged
from sandboxes.typed import run

from ..jsonask import JsonAsker, prompt
from .observe import observe, uses_screen

STATUSES = ("complete", "continue", "no_effect", "off_track", "stuck")
ENDS_SUBGOAL = ("complete", "off_track", "stuck")
STEP_TOOLS = ("bash", "python", "editor", "computer", "delegate")
"""The calls that can change the screen or the files; an editor `view` cannot."""
PRIOR_SCREENSHOTS = 3
HISTORY_LINES = 3
OUTPUT_CHARS = 2000
FILES_SHOWN = 40


def parse_step_status(value) -> dict:
    if not isinstance(value, dict) or value.get("status") not in STATUSES:
        raise ValueError(f'expected {{"status": one of {", ".join(STATUSES)}, "evidence": "..."}}')
    for key in ("evidence", "feedback"):
        if not isinstance(value.get(key, ""), str):
            raise ValueError(f"`{key}` must be a string")
    return {
        "status": value["status"],
        "evidence": value.get("evidence", "")[:600],
        "feedback": value.get("feedback", "")[:600],
    }


@dataclass
class Snapshot:
    """What the screen or the files looked like at one moment."""

    screenshot: bytes | None = None
    files: dict[str, tuple] = field(default_factory=dict)


def step_calls(content: list[dict]) -> list[dict]:
    """The tool calls of one assistant turn that can change the screen or the files."""
    return [
        block
        for block in content
        if block.get("type") == "tool_use"
        and block.get("name") in STEP_TOOLS
        and not (block["name"] == "editor" and (block.get("input") or {}).get("command") == "view")
    ]


class StepVerifier(LoopHook):
    """Joins one actor's tool loop: snapshots before each step, judges after it."""

    def __init__(self, context, subgoal_text: str, counts: Counter, asker: JsonAsker):
        self.context = context
        self.subgoal = subgoal_text
        self.counts = counts
        self.ask = asker
        self.screen = uses_screen(context.config)
        self.before: Snapshot | None = None
        self.prior: list[bytes] = []
        self.history: list[str] = []
        self.feedback = ""
        self.steps = 0

    def before_request(self, loop) -> None:
        if self.before is None:
            self.before = self._snapshot()

    def note(self, loop) -> str:
        return self.feedback

    def after_tool_results(self, loop) -> None:
        self.feedback = ""
        calls = step_calls(loop.messages[-2]["content"]) if len(loop.messages) >= 2 else []
        if not calls:
            return
        after = self._snapshot()
        self.steps += 1
        action = "; ".join(f"{c['name']} {json.dumps(c.get('input'))[:300]}" for c in calls)
        verdict = self._judge(loop, action, after)
        self.counts[verdict["status"]] += 1
        self._record(loop.agent, action, verdict)
        self.history.append(f"{self.steps}. {action[:200]} -> {verdict['status']}")
        if self.before.screenshot is not None:
            self.prior = [*self.prior, self.before.screenshot][-PRIOR_SCREENSHOTS:]
        self.before = after
        status, why = verdict["status"], verdict["evidence"] or "(no evidence given)"
        if status == "no_effect":
            self.feedback = (
                f"<step-verifier>Your last step had no effect: {why}. {verdict['feedback']}".strip()
                + "</step-verifier>"
            )
        elif status in ENDS_SUBGOAL:
            raise Finished(f"step_{status}", why)

    def _judge(self, loop, action: str, after: Snapshot) -> dict:
        output = _results_text(loop.messages[-1]["content"])[:OUTPUT_CHARS]
        said = _assistant_text(loop.messages[-2]["content"])[:600]
        history = "\n".join(self.history[-HISTORY_LINES:]) or "(first step)"
        images: tuple = ()
        if self.screen and self.before.screenshot is not None and after.screenshot is not None:
            images = (*self.prior, self.before.screenshot, after.screenshot)
            seen = (
                f"<screens>{len(self.prior)} earlier screenshot(s), then BEFORE and AFTER this "
                "step, in that order</screens>"
            )
        else:
            changes = _file_changes(self.before.files, after.files)
            seen = f"<file-changes>\n{changes}\n</file-changes>"
        user = (
            f"<task>\n{self.context.task.instruction}\n</task>\n\n<subgoal>\n{self.subgoal}\n"
            f"</subgoal>\n\n<recent-actions>\n{history}\n</recent-actions>\n\n<actor-said>\n"
            f"{said or '(nothing)'}\n</actor-said>\n\n<step>\n{action}\n</step>\n\n<step-output>\n"
            f"{output or '(none)'}\n</step-output>\n\n{seen}"
        )
        answer, _ = self.ask.ask(
            prompt("structagent_step.md"), user, parse_step_status, f"step {self.steps}", images
        )
        return answer or {"status": "continue", "evidence": "unusable answer", "feedback": ""}

    def _snapshot(self) -> Snapshot:
        if self.screen:
            shot = observe(self.context, a11y=False)
            if shot.images:
                return Snapshot(screenshot=shot.images[0])
        try:  # a headless run, or a screen that could not be read: the files, then
            listed = run(self.context.sandbox, FsChanged(self.context.started_at, limit=500))
        except (ToolError, StateActError):
            return Snapshot()
        return Snapshot(files={p["path"]: (p["mtime"], p["size"]) for p in listed.paths})

    def _record(self, agent: str, action: str, verdict: dict) -> None:
        if self.context.record is not None:
            self.context.record.append(
                "structagent_step", agent="structagent", actor=agent, action=action[:500], **verdict
            )


def _file_changes(before: dict, after: dict) -> str:
    changed = [
        f"{path} ({'new' if path not in before else 'modified'}, {after[path][1]} bytes)"
        for path in sorted(after)
        if before.get(path) != after[path]
    ]
    if not changed:
        return "(no file was created or modified by this step)"
    return "\n".join(changed[:FILES_SHOWN])


def _results_text(content: list[dict]) -> str:
    parts = []
    for block in content:
        if block.get("type") == "tool_result":
            inner = block.get("content") or []
            parts += [b.get("text", "") for b in inner if b.get("type") == "text"]
    return "\n".join(parts)


def _assistant_text(content: list[dict]) -> str:
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
