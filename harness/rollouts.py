"""`--best-of N`: N rollouts of one task from one post-setup snapshot, one chosen (never by the
checker) and handed back to the runner for scoring."""

from __future__ import annotations

import logging
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.control import run_control
from harness.control.best_of import Rollout, select_rollout, selection_summary
from harness.control.milestones import discard_milestones
from harness.control.structagent.judge import judge_choice
from harness.kernel.core import StateActError
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord
from harness.models import make_model
from harness.run.context import RunContext
from harness.run.outcome import TaskOutcome, error_status
from sandboxes import discard_snapshot, open_sandbox
from tasks.setup import GUI_STEPS, run_setup

log = logging.getLogger(__name__)

RESTART_STEPS = GUI_STEPS | {"sleep"}
"""Setup steps a best-of rollout runs again on its snapshot: they start programs, change no file."""


class BestOf:
    """`--best-of N`: N rollouts from one post-setup snapshot, each in its own sandbox and run
    folder (`rollout-1/`, …), run in parallel; one chosen by `select_rollout` (never the checker).
    Its sandbox is handed back for scoring; the others are closed as soon as the choice is made."""

    def __init__(self, context: RunContext, model, gate_model):
        self.context = context
        self.n = context.config.best_of
        self.models = self._per_rollout(model, "model")
        self.gate_models = self._per_rollout(gate_model, "gate_model")
        self.sandboxes: list = [None] * self.n
        self.results: list[dict] = []
        self.answers: list[str | None] = [None] * self.n
        """Each rollout's `finish` answer; the chosen one's is what string_match reads."""
        self.chosen: Rollout | None = None
        self.reasons: list[str] = []
        self.snapshot = None

    def _per_rollout(self, given, name: str) -> list:
        if isinstance(given, list | tuple):
            if len(given) != self.n:
                raise StateActError(f"best-of-{self.n} needs {self.n} {name}s, got {len(given)}.")
            return list(given)
        return [given] * self.n  # None: each rollout builds its own from the spec

    @property
    def chosen_dir(self) -> Path | None:
        return self._dir(self.chosen.index) if self.chosen else None

    def _dir(self, index: int) -> Path:
        return self.context.record.dir / f"rollout-{index}"

    def run(self):
        """Run the rollouts and choose; returns the chosen rollout's (still open) sandbox."""
        setup_sandbox = self.context.sandbox
        self.snapshot = setup_sandbox.snapshot()
        setup_sandbox.close()
        self.context.record.append("best_of_started", agent="harness", rollouts=self.n)
        # Opened here, not in the pool: a local sandbox dies with the thread that started it.
        for index in range(self.n):
            self.sandboxes[index] = open_sandbox(self.context.config.sandbox, self.snapshot)
        with ThreadPoolExecutor(max_workers=self.n, thread_name_prefix="rollout") as pool:
            self.results = list(pool.map(self._rollout, range(1, self.n + 1)))
        rollouts = [
            Rollout.from_result(i, result, self._dir(i))
            for i, result in enumerate(self.results, start=1)
        ]
        self.chosen, self.reasons = select_rollout(rollouts)
        judged = judge_choice(self.context, rollouts, self.sandboxes, self._dir)
        if judged is not None:  # StructAgent's BBON judge; the fixed ranking is the fallback
            self.chosen, self.reasons = judged
        self.context.record.append(
            "best_of_selected", agent="harness", selected=self.chosen.index, reasons=self.reasons
        )
        for index, sandbox in enumerate(self.sandboxes, start=1):
            if sandbox is not None and index != self.chosen.index:
                sandbox.close()
        chosen = self.sandboxes[self.chosen.index - 1]
        if chosen is None:
            raise StateActError(f"rollout {self.chosen.index} has no sandbox to score.")
        return chosen

    def _rollout(self, index: int) -> dict:
        base = self.context
        run_dir = self._dir(index)
        record = RunRecord(run_dir)
        stats = RunStats(on_turn=base.stats.on_turn)
        outcome = TaskOutcome(base.task.id, control=base.config.control, preset=base.config.preset)
        outcome.options = base.config.options()
        try:
            model = self.models[index - 1] or make_model(
                base.config.model, base.config.model_options
            )
            sandbox = self.sandboxes[index - 1]
            # A snapshot keeps files, not running programs: the setup's window steps run again so
            # each rollout starts with the applications the setup opened.
            replayed = [step for step in base.task.config if step.type in RESTART_STEPS]
            outcome.status = "setup"
            run_setup(replayed, sandbox, base.task, base.config.cache_path)
            record.append(
                "setup_done",
                agent="harness",
                started_at=base.started_at,
                rollout=index,
                replayed_steps=[step.type for step in replayed],
            )
            outcome.status = "running"
            context = RunContext(
                config=base.config,
                model=model,
                sandbox=sandbox,
                task=base.task,
                gate_model=self.gate_models[index - 1],
                record=record,
                stats=stats,
                outcome=outcome,
                started_at=base.started_at,
            )
            outcome.take_end(run_control(context))
            self.answers[index - 1] = outcome.answer
        except StateActError as exc:
            outcome.fail(error_status(exc, outcome.status), str(exc))
        except Exception as exc:  # one rollout's bug must not take the others down
            log.error("rollout %d failed:\n%s", index, traceback.format_exc())
            outcome.fail("error", f"{type(exc).__name__}: {exc}")
        result = {**outcome.result(stats), "rollout": index, "score": None}
        record.append("result", agent="harness", **result)
        record.write_result(result)  # unscored: only the chosen rollout is scored, at the top
        record.close()
        discard_milestones(run_dir)  # a rollout is never resumed
        return result

    def adopt(self, outcome: TaskOutcome) -> TaskOutcome:
        """The top-level outcome takes the chosen rollout's status, answer and gate record."""
        chosen = self.results[self.chosen.index - 1]
        outcome.status = chosen["status"]
        outcome.error = chosen["error"]
        outcome.final_action = "FAIL" if chosen["status"] == "infeasible" else None
        outcome.answer = self.answers[self.chosen.index - 1]
        outcome.gate_rounds = chosen["gate_rounds"]
        outcome.gate_passed = chosen["gate_passed"]
        return outcome

    def summary(self) -> dict:
        """What result.json adds: the cost of every rollout, and the selection with its reasons."""
        return selection_summary(self.results, self.chosen, self.reasons)

    def close(self) -> None:
        for sandbox in self.sandboxes:
            if sandbox is not None:
                sandbox.close()  # closing twice is harmless
        if self.snapshot is not None:
            discard_snapshot(self.snapshot)
