"""OSWorld 2.0's inline checkpoint evaluation (`checkpoint_eval_mode=inline`): the benchmark's own
`evaluate()` also runs mid-run, once the task's main agent has taken each of `checkpoint_steps`
turns (the official launcher: 150 and 300), and its verdict is recorded with the step it was taken
at. It reports how far the agent had got by then; the phase's score stays its evaluation after the
agent stopped, as in the default mode.

The agent is stopped while the benchmark looks (its processes frozen, the guest server answering as
an observer) and resumed after, as between phases. An inline evaluation whose judge failed is
recorded with that error; it does not make the run an evaluation error, because the score that
counts is the final one, judged again.

    inline = InlineEvaluations(config.osworld2.checkpoint_steps, record)
    stats.on_turn = inline.chained(stats.on_turn)
    inline.watch(episode, sandbox, phase)       # for each phase, before its agent runs
"""

from __future__ import annotations

import logging

from harness.kernel.core import StateActError
from harness.kernel.records import RunRecord
from sandboxes.agent_stop import freeze_agent, thaw_agent

log = logging.getLogger(__name__)


class InlineEvaluations:
    """One task run's inline verdicts, taken as the main agent's turn count passes each step."""

    def __init__(self, steps: list[int], record: RunRecord):
        self.pending = sorted(set(steps))
        self.record = record
        self.taken: list[dict] = []
        self.episode = self.sandbox = None
        self.phase = 0

    def restore(self, events: list[dict]) -> None:
        """A resumed run's verdicts taken before it stopped (its trajectory's events): kept, and
        their steps not evaluated again."""
        for event in events:
            if event["event"] == "inline_evaluation":
                entry = {k: v for k, v in event.items() if k not in ("event", "time", "agent")}
                self.taken.append(entry)
                self.pending = [step for step in self.pending if step != entry.get("step")]

    def watch(self, episode, sandbox, phase: int) -> None:
        """Evaluate `phase` on `sandbox` through `episode` when a step is reached."""
        self.episode, self.sandbox, self.phase = episode, sandbox, phase

    def chained(self, on_turn):
        """A `RunStats.on_turn` that checks the steps, then calls `on_turn`."""

        def call(stats) -> None:
            self.check(stats.main_turns)
            if on_turn is not None:
                on_turn(stats)

        return call

    def check(self, main_turns: int) -> None:
        """Called as the main agent's turn `main_turns` comes back, before its tools run: the
        machine then holds what the first `main_turns - 1` turns did."""
        while self.pending and main_turns > self.pending[0] and self.episode is not None:
            self.evaluate(self.pending.pop(0))

    def evaluate(self, step: int) -> dict:
        machine = self.episode.machine
        before = machine.phase
        frozen = freeze_agent(self.sandbox)
        entry: dict = {"phase": self.phase, "step": step}
        try:
            verdict = self.episode.judge(self.phase)
            entry.update(
                score=verdict.score,
                checkpoints=verdict.checkpoints,
                judges=verdict.judges,
                error=(verdict.judge_errors or [None])[0],
            )
        except StateActError as exc:
            entry.update(score=None, checkpoints=[], judges=[], error=str(exc))
        finally:
            machine.phase = before
            thaw_agent(self.sandbox, frozen)
        log.info("inline evaluation at step %d: %s", step, entry["score"])
        self.taken.append(entry)
        self.record.append("inline_evaluation", agent="harness", **entry)
        return entry
