"""Stall and loop detection, and the routed response to each stall.

Three signals: the same action with the same observation repeated (`repeat`), turns that change
no file and produce no output not seen before (`no_progress`), and consecutive gate rejections
naming the same gaps (`gate_loop`). The router answers escalating stalls with feedback, then a
forced replan, then a fresh worker (when the mode has one), then the end of the run as `stalled`;
verified progress (files changing over `calm_after` turns in a row, or a requirement turning
VERIFIED) lowers the level again, so a long run that keeps moving is not ended by stalls far
apart. Each response is recorded as a `stall` event in the trajectory, each fall-back as a
`stall_calm` event.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass

from harness.kernel.core import Finished
from harness.kernel.loop import LoopHook
from harness.run.config import StallConfig
from sandboxes.toolbox.protocol import FsChanged
from sandboxes.typed import run

RESPONSES = ("feedback", "replan", "fresh_worker", "stop")


def fingerprint(value) -> str:
    """A short stable digest of any JSON-able value."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


@dataclass
class StallSignal:
    """One detected stall: what kind, how many times, and a sentence the agent can act on."""

    kind: str
    count: int
    detail: str
    action: str = ""
    """Fingerprint of the repeated action (for `repeat`), so a mode can suppress equivalents."""


class StallDetector:
    """Watches actions, observations, state fingerprints and gate gaps; reports a signal once per
    stall."""

    def __init__(self, config: StallConfig | None = None):
        self.config = config or StallConfig()
        self.recent: deque[tuple[str, str]] = deque(maxlen=self.config.repeat_limit)
        self.seen_outputs: set[str] = set()
        self.state_key: str | None = None
        self.idle_turns = 0
        self.fresh_output = False
        self.gate_gaps: list[str] = []
        self.gate_repeats = 0
        self.progress_streak = 0

    def observe_action(self, action: dict, observation: str) -> StallSignal | None:
        """One executed action (`{"name", "input"}`) and what it returned."""
        key = (fingerprint(action), fingerprint(observation))
        self.recent.append(key)
        new_output = key[1] not in self.seen_outputs
        self.seen_outputs.add(key[1])
        self.fresh_output = self.fresh_output or new_output
        limit = self.config.repeat_limit
        if len(self.recent) == limit and len(set(self.recent)) == 1:
            self.recent.clear()
            self.progress_streak = 0
            shown = json.dumps(action.get("input"), default=str)[:160]
            return StallSignal(
                "repeat",
                limit,
                f"`{action.get('name')}` {shown} ran {limit} times in a row with the same result",
                key[0],
            )
        return None

    def observe_turn(self, state_key: str | None) -> StallSignal | None:
        """The end of one turn, with a fingerprint of the sandbox's changed files (None if
        unknown)."""
        changed = state_key is not None and state_key != self.state_key
        if state_key is not None:
            self.state_key = state_key
        self.progress_streak = self.progress_streak + 1 if changed else 0
        if changed or self.fresh_output:
            self.idle_turns, self.fresh_output = 0, False
            return None
        self.idle_turns += 1
        if self.idle_turns >= self.config.no_progress_turns:
            self.idle_turns = 0
            return StallSignal(
                "no_progress",
                self.config.no_progress_turns,
                f"{self.config.no_progress_turns} turns changed no file and produced no new output",
            )
        return None

    def observe_gate(self, gaps: list[str]) -> StallSignal | None:
        """One gate rejection's gaps."""
        normalized = sorted(" ".join(gap.lower().split()) for gap in gaps)
        self.gate_repeats = self.gate_repeats + 1 if normalized == self.gate_gaps else 1
        self.gate_gaps = normalized
        if self.gate_repeats >= self.config.gate_repeats:
            self.gate_repeats = 0
            self.progress_streak = 0
            return StallSignal(
                "gate_loop",
                self.config.gate_repeats,
                "the finish gate named the same gaps again: " + "; ".join(gaps)[:300],
            )
        return None

    def progressed(self) -> None:
        """Something verifiably moved (a requirement verified, a subgoal advanced)."""
        self.idle_turns = 0

    def sustained_progress(self) -> bool:
        """True (once) when files changed over `calm_after` turns in a row with no stall between."""
        if self.progress_streak < self.config.calm_after:
            return False
        self.progress_streak = 0
        return True


class StallRouter:
    """Escalates through `responses` as stalls repeat; the level falls back after verified
    progress."""

    def __init__(self, record=None, responses: tuple[str, ...] = RESPONSES, agent: str = "harness"):
        self.record = record
        self.responses = responses
        self.level = 0
        self.agent = agent
        self.history: list[dict] = []

    def route(self, signal: StallSignal) -> str:
        """The response for this signal; recorded as a `stall` event."""
        response = self.responses[min(self.level, len(self.responses) - 1)]
        self.level += 1
        entry = {
            "kind": signal.kind,
            "count": signal.count,
            "detail": signal.detail,
            "response": response,
            "level": self.level,
        }
        self.history.append(entry)
        if self.record is not None:
            self.record.append("stall", agent=self.agent, **entry)
        return response

    def calm(self, reason: str) -> None:
        """Fall back one level after verified progress; recorded as a `stall_calm` event."""
        if self.level == 0:
            return
        self.level -= 1
        if self.record is not None:
            self.record.append("stall_calm", agent=self.agent, level=self.level, reason=reason)


def feedback_text(signal: StallSignal) -> str:
    return (
        f"<stall-detected>\n{signal.detail}. That is not making progress: do not "
        "repeat it; take a different approach, and check the state you need with a different "
        "command.\n</stall-detected>"
    )


def replan_text(signal: StallSignal) -> str:
    return (
        f"<replan-required>\n{signal.detail}. Stop the current approach. Before any "
        "other action, write a new plan (the `plan` tool) for what remains, using a different "
        "method than the one that stalled.\n"
        "</replan-required>"
    )


def stop_run(signal: StallSignal) -> Finished:
    return Finished("stalled", f"the run stalled: {signal.detail}")


class MainAgentStallWatch(LoopHook):
    """The stall watch of the default mode, a loop hook: after each turn's results it reads the main
    agent's newest tool calls and results from its history, checks the sandbox's changed files, and
    routes a stall to a response: a note on the next request, a fresh worker's report, or the end of
    the loop (`Finished("stalled")`)."""

    SKIPPED_TOOLS = {"plan", "finish"}

    def __init__(
        self, config: StallConfig, sandbox, started_at: float, record=None, fresh_worker=None
    ):
        self.detector = StallDetector(config)
        responses = (
            RESPONSES
            if fresh_worker is not None
            else tuple(r for r in RESPONSES if r != "fresh_worker")
        )
        self.router = StallRouter(record, responses)
        self.sandbox = sandbox
        self.started_at = started_at
        self.fresh_worker = fresh_worker
        self.loop = None
        self.seen_messages = 0
        self.pending: list[StallSignal] = []
        self.response = ""

    def attach(self, loop) -> None:
        """Start watching `loop` from its current history (after a resume, the restored part is
        old)."""
        self.loop = loop
        self.seen_messages = len(loop.messages)

    def gate_rejected(self, gaps: list[str]) -> None:
        signal = self.detector.observe_gate(gaps)
        if signal:
            self.pending.append(signal)

    def note(self, loop) -> str:
        return self.response if loop is self.loop else ""

    def after_tool_results(self, loop) -> None:
        if loop is self.loop:
            self.response = ""  # a response rides on one request only
            self.response = self._check()

    def _check(self) -> str:
        messages = self.loop.messages
        if len(messages) < self.seen_messages:  # compaction rewrote the history
            self.seen_messages = len(messages)
        new = messages[self.seen_messages :]
        self.seen_messages = len(messages)
        signals = list(self.pending)
        self.pending.clear()
        if any(m["role"] == "assistant" for m in new):
            signals += self._observe(new)
        if not signals and self.detector.sustained_progress():
            turns = self.detector.config.calm_after
            self.router.calm(f"files changed over {turns} turns in a row")
        return "\n".join(self._respond(signal) for signal in signals[:1])

    def progressed(self) -> None:
        """A requirement turned VERIFIED: progress the harness checked itself."""
        self.detector.progressed()
        self.router.calm("a requirement was verified")

    def _observe(self, new: list[dict]) -> list[StallSignal]:
        uses = {
            b.get("id"): b
            for m in new
            if m["role"] == "assistant"
            for b in m["content"]
            if b.get("type") == "tool_use"
        }
        signals = []
        for message in new:
            for block in message["content"] if message["role"] == "user" else []:
                use = (
                    uses.get(block.get("tool_use_id"))
                    if block.get("type") == "tool_result"
                    else None
                )
                if use is None or use.get("name") in self.SKIPPED_TOOLS:
                    continue
                text = "\n".join(
                    b.get("text", "") for b in block.get("content", []) if b.get("type") == "text"
                )
                signal = self.detector.observe_action(
                    {"name": use.get("name"), "input": use.get("input")}, text
                )
                if signal:
                    signals.append(signal)
        turn_signal = self.detector.observe_turn(self._state_key())
        return signals + ([turn_signal] if turn_signal else [])

    def _state_key(self) -> str | None:
        try:
            changed = run(self.sandbox, FsChanged(self.started_at, limit=500))
        except Exception:  # a stall check must never break the agent's turn
            return None
        return fingerprint([(p["path"], p["mtime"], p["size"]) for p in changed.paths])

    def _respond(self, signal: StallSignal) -> str:
        response = self.router.route(signal)
        if response == "feedback":
            return feedback_text(signal)
        if response == "replan":
            return replan_text(signal)
        if response == "fresh_worker":
            report = self.fresh_worker(signal)
            return (
                f"<fresh-worker>\n{signal.detail}, so the harness handed the task to a "
                f"fresh worker. Its report:\n{report}\n</fresh-worker>"
            )
        raise stop_run(signal)
