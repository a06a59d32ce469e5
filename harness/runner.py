"""Run one task end to end: sandbox, setup, main agent with gate, scoring, run record.

Whatever happens, a run ends with a `result.json` and no sandbox left behind.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import traceback
from pathlib import Path

from harness.control.main_agent import MainAgent
from harness.kernel.core import Model, StateActError
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord, write_json_atomic
from harness.kernel.resume import restore_main_agent
from harness.run.config import RunConfig
from harness.run.context import RunContext
from sandboxes import SandboxError, open_sandbox
from subagents import DelegateTool, main_agent_extra_tools
from tasks.evaluate import evaluate
from tasks.getters import SandboxSource
from tasks.schema import Task, load_task
from tasks.setup import run_setup

from .control import StateActHooks, gate_review, run_control
from .control.milestones import discard_milestones, last_milestone, snapshot_of
from .models import endpoint_provider, make_model

log = logging.getLogger(__name__)


def run_task(
    task: Task | str | Path,
    config: RunConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    model: Model | None = None,
    gate_model: Model | None = None,
    on_turn=None,
    after_run=None,
) -> dict:
    """Run `task` under `config`, writing the run directory `out_dir`; returns result.json's content.

    `after_run(sandbox)`, when given, runs once the agent has ended and the task is scored, before the
    sandbox closes (to copy results out); a `StateActError` from it becomes the result's error.
    """
    task = task if isinstance(task, Task) else load_task(task)
    if config.allow_host_paths:
        task = task.model_copy(update={"allow_host_paths": True})
    out_dir = Path(out_dir)
    if resume and (out_dir / "result.json").exists():
        return json.loads((out_dir / "result.json").read_text())
    config = config.with_preset()
    if (
        config.model_options.provider is None
    ):  # endpoint settings belong to the main model's provider
        config.model_options.provider = endpoint_provider(config.model)
    record = RunRecord(out_dir)
    stats = RunStats(on_turn=on_turn)
    record.write_config(
        {"task_id": task.id, "task_path": str(task.base_dir), **config.model_dump(mode="json")}
    )
    outcome = TaskOutcome(task.id, control=config.control, preset=config.preset)
    sandbox = None
    try:
        model = model or make_model(config.model, config.model_options)
        milestone = last_milestone(out_dir) if resume else None  # the newest verified state
        sandbox = open_sandbox(config.sandbox, snapshot_of(milestone))
        outcome.status = "setup"

        if milestone is None:
            run_setup(task.config, sandbox, task, _cache_dir(config))
        started_at = milestone["started_at"] if milestone else time.time()
        record.append(
            "setup_done",
            agent="harness",
            started_at=started_at,
            milestone=milestone and milestone["number"],
        )
        context = RunContext(
            config=config,
            model=model,
            sandbox=sandbox,
            task=task,
            gate_model=gate_model,
            record=record,
            stats=stats,
            outcome=outcome,
            started_at=started_at,
            resume=resume,
            milestone=milestone,
        )
        end = _run_agent(context)
        outcome.status, outcome.final_action = (
            end.status,
            ("FAIL" if end.status == "infeasible" else None),
        )
        _score(task, sandbox, config, outcome)
        if after_run is not None:
            after_run(sandbox)
    except StateActError as exc:
        outcome.fail(_error_status(exc, outcome.status), str(exc))
    except Exception as exc:  # a bug must still leave a result and no sandbox behind
        log.error("run of %s failed:\n%s", task.id, traceback.format_exc())
        outcome.fail("error", f"{type(exc).__name__}: {exc}")
    finally:
        if sandbox is not None:
            sandbox.close()
    result = outcome.result(stats)
    record.append("result", agent="harness", **result)
    record.write_result(result)
    record.close()
    discard_milestones(out_dir)  # with a result, nothing resumes this run
    return result


def _run_agent(context: RunContext):
    if context.config.control != "stateact":
        return run_control(context)
    hooks = StateActHooks(context)
    delegate = DelegateTool(context) if context.config.subagents.enabled else None
    agent = MainAgent(
        context,
        review=gate_review(context, hooks.on_decision),
        delegate_tool=hooks.wrap_delegate(delegate),
        hooks=hooks.loop_hooks,
        extra_tools=main_agent_extra_tools(context),
    )
    context.outcome.status = "running"
    if context.resume:
        restore_main_agent(
            agent, context.record, context.sandbox, since_event_index=context.since_event_index
        )
    hooks.attach(agent)
    return agent.run(context.task.instruction)


def _score(task: Task, sandbox, config: RunConfig, outcome: TaskOutcome) -> None:
    """Run the task's postconfig and checker against the sandbox as the agent left it."""
    if not task.evaluator or not task.evaluator.func:
        return

    try:
        run_setup(task.evaluator.postconfig, sandbox, task, _cache_dir(config))
    except StateActError as exc:
        outcome.evaluation_note = f"postconfig failed: {exc}"
    with tempfile.TemporaryDirectory(prefix="stateact-eval-") as work_dir:
        evaluation = evaluate(
            task,
            SandboxSource(sandbox),
            cache_dir=_cache_dir(config),
            work_dir=Path(work_dir),
            final_action=outcome.final_action,
        )
    outcome.score = evaluation.score
    outcome.metrics = [metric.model_dump() for metric in evaluation.metrics]
    if evaluation.error:
        outcome.error = evaluation.error


def _cache_dir(config: RunConfig) -> Path | None:
    return Path(config.cache_dir) if config.cache_dir else None


def _error_status(exc: StateActError, phase: str) -> str:
    if isinstance(exc, SandboxError):
        return "sandbox_error"
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
        self.gate_rounds = 0
        self.gate_passed: bool | None = None
        self.evaluation_note: str | None = None
        self.started = time.monotonic()

    def fail(self, status: str, error: str) -> None:
        self.status, self.error = status, error

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
            "cost_usd": round(usage.cost_usd, 6),
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
        }


__all__ = ["run_task", "TaskOutcome", "write_json_atomic"]
