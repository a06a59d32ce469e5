"""What the runner learns about one task as it goes; it becomes result.json."""

from __future__ import annotations

import time

from harness.kernel.core import BudgetExceeded, StateActError, Usage
from harness.kernel.loop import RunStats
from sandboxes import SandboxError


def error_status(exc: StateActError, phase: str) -> str:
    """The result's status for an error raised during `phase` (setup, running, …)."""
    if isinstance(exc, SandboxError):
        return getattr(exc, "status", "sandbox_error")  # `sandbox_limit`: a size limit ended it
    return "setup_error" if phase == "setup" else "model_error" if phase == "running" else "error"


class TaskOutcome:
    """What the runner learns about a task as it goes; becomes result.json."""

    def __init__(self, task_id: str, control: str = "stateact", preset: str = "full"):
        self.task_id = task_id
        self.control = control
        self.preset = preset
        self.status = "starting"
        self.error: str | None = None
        self.score: float | None = None
        self.metrics: list[dict] = []
        self.final_action: str | None = None
        self.answer: str | None = None
        """The accepted finish's text: a WebArena task's answer (its string_match compares it)."""
        self.gate_rounds = 0
        self.gate_passed: bool | None = None
        self.evaluation_note: str | None = None
        self.judge_usage: Usage | None = None
        """What the judge model's calls used while scoring (already in the run's usage)."""
        self.options: dict = {}
        """The run's ablation switches (`RunConfig.options`)."""
        self.control_stats: dict = {}
        """What the control mode counts (the AND/OR tree's metrics, StructAgent's subgoals...)."""
        self.started = time.monotonic()

    def fail(self, status: str, error: str) -> None:
        self.status, self.error = status, error

    def take_end(self, end) -> None:
        """What the control mode's end says: status, FAIL for infeasible, the answer (the
        accepted finish's text, WebArena's string_match input; andor: the root's report), and
        which budget ended the run in the error column."""
        self.status = end.status
        self.final_action = "FAIL" if end.status == "infeasible" else None
        self.answer = end.message if end.status == "completed" else None
        if isinstance(end, BudgetExceeded):
            self.error = end.message

    def result(self, stats: RunStats) -> dict:
        usage = stats.usage
        return {
            "task_id": self.task_id,
            "score": self.score
            if self.score is not None
            else (None if self.error is None else 0.0),
            "success": self.score == 1.0 if self.score is not None else False,
            "status": self.status,
            "error": self.error,
            "cost_usd": round(usage.cost_usd, 6) if usage.priced else None,  # None: unknown
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "model_turns": stats.model_turns,
            "main_turns": stats.main_turns,
            "tool_uses": stats.tool_uses,
            "delegations": stats.delegations,
            "gui_steps": stats.gui_steps,
            "gate_rounds": self.gate_rounds,
            "gate_passed": self.gate_passed,
            "duration_s": round(time.monotonic() - self.started, 3),
            "metrics": self.metrics,
            "evaluation_note": self.evaluation_note,
            "control": self.control,
            "preset": self.preset,
            "options": self.options,
            "control_stats": self.control_stats,
            **self._judge_fields(),
        }

    def _judge_fields(self) -> dict:
        """The judge's share of the cost and tokens above, when a judge model scored the task."""
        judged = self.judge_usage
        if judged is None:
            return {}
        return {
            "judge_cost_usd": round(judged.cost_usd, 6) if judged.priced else None,
            "judge_input_tokens": judged.prompt_tokens,
            "judge_output_tokens": judged.output_tokens,
        }
