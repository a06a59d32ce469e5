"""Run one task end to end: sandbox, setup, control mode, scoring, run record.

Whatever happens, a run ends with a `result.json` and no sandbox left behind.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from harness.kernel.core import Model, StateActError
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord, write_json_atomic
from harness.run.config import RunConfig
from harness.run.context import RunContext
from harness.run.outcome import TaskOutcome, error_status
from sandboxes import Sandbox, open_sandbox
from sandboxes.agent_stop import freeze_agent
from sandboxes.pool import open_pooled
from tasks.evaluate import evaluate
from tasks.getters import SandboxSource
from tasks.schema import Task, load_task
from tasks.setup import run_setup
from tasks.webarena.deployment import active as webarena_deployment
from tasks.webarena.deployment import configure as configure_webarena
from tasks.webarena.deployment import use_judge

from .control import controller_for, run_control
from .control.memory import remember
from .control.milestones import discard_milestones, last_milestone, snapshot_of
from .models import endpoint_provider, make_model
from .models.judge import counting_judge_usage, judge_model
from .rollouts import BestOf

log = logging.getLogger(__name__)


def run_task(
    task: Task | str | Path,
    config: RunConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    model: Model | list[Model] | None = None,
    gate_model: Model | list[Model] | None = None,
    on_turn=None,
    after_run=None,
) -> dict:
    """Run `task` under `config`, writing the run directory `out_dir`; returns result.json's
    content.

    Under `config.best_of` N > 1, `model` and `gate_model` may be lists of N (one per rollout); a
    single model is shared by the rollouts (fine for API clients, not for a scripted model), and
    None builds one per rollout from the spec. A best-of run is never resumed: it starts again.

    `after_run(sandbox)`, when given, runs once the agent has ended and the task is scored,
    before the sandbox closes (to copy results out); a `StateActError` from it becomes the
    result's error.
    """
    task = _with_host_paths(task if isinstance(task, Task) else load_task(task), config)
    out_dir = Path(out_dir)
    if resume and (out_dir / "result.json").exists():
        return json.loads((out_dir / "result.json").read_text())
    config = _prepared(config)
    record = RunRecord(out_dir)
    stats = RunStats(on_turn=on_turn)
    record.write_config(
        {"task_id": task.id, "task_path": str(task.base_dir), **config.model_dump(mode="json")}
    )
    run = _Run(task, config, record, stats, resume=resume and config.best_of == 1)
    result = run.execute(model, gate_model, after_run)
    record.append("result", agent="harness", **result)
    record.write_result(result)
    record.close()
    discard_milestones(out_dir)  # with a result, nothing resumes this run
    if config.memory_dir:
        lessons_from = run.lessons_dir or out_dir
        try:
            remember(config.memory_dir, task.id, task.instruction, lessons_from)
        except (StateActError, OSError) as exc:
            log.warning("lessons of %s not stored: %s", task.id, exc)
    return result


def _with_host_paths(task: Task, config: RunConfig) -> Task:
    if config.allow_host_paths:
        return task.model_copy(update={"allow_host_paths": True})
    return task


def pool_key(run_dir: str | Path) -> str:
    """How a warm pool knows the run a sandbox is set up ahead for: its run folder."""
    return str(Path(run_dir).resolve())


def setup_ahead(task_path: Path, config: RunConfig) -> Callable[[Sandbox], None]:
    """The task's own setup as `run_task` runs it, for a warm pool to run in the sandbox the task
    will take (`WarmPool.plan`): files in place and applications open before the task starts."""

    def prepare(sandbox: Sandbox) -> None:
        task = _with_host_paths(load_task(task_path), config)
        run_setup(task.config, sandbox, task, config.cache_path, before_agent=True)

    return prepare


def _prepared(config: RunConfig) -> RunConfig:
    config = config.with_preset()
    if config.model_options.provider is None:  # endpoint settings belong to the main model's
        config.model_options.provider = endpoint_provider(config.model)
    if config.sites:  # the WebArena sites (a Python API or Ray node run sets them here)
        configure_webarena(config.sites, cache=config.cache_dir)
        if config.judge_model and webarena_deployment().judge is None:
            use_judge(judge_model(config.judge_model, config.model_options))
    return config


class _Run:
    """One run's sandbox, setup, control and scoring; `execute` returns result.json's content and
    never raises: an error becomes the result's status and message, and no sandbox is left."""

    def __init__(self, task: Task, config: RunConfig, record: RunRecord, stats, *, resume: bool):
        self.task, self.config, self.record, self.stats = task, config, record, stats
        self.resume = resume
        self.outcome = TaskOutcome(task.id, control=config.control, preset=config.preset)
        self.outcome.options = config.options()
        self.sandbox = None
        self.sandbox_from_pool = False
        self.set_up_ahead = False
        self.selection: BestOf | None = None

    @property
    def lessons_dir(self) -> Path | None:
        """Where the run's lessons are read from: the chosen rollout's folder under best-of."""
        return self.selection.chosen_dir if self.selection else None

    def execute(self, model, gate_model, after_run) -> dict:
        try:
            controller_for(self.config.control)  # an unknown mode fails before any sandbox opens
            context = self._set_up(model, gate_model)
            if self.config.best_of > 1:
                self.selection = BestOf(context, model, gate_model)
                self.sandbox = self.selection.run()  # the chosen rollout's; the setup one closed
                self.outcome = self.selection.adopt(self.outcome)
            else:
                self.outcome.take_end(run_control(context))
            # Judging starts when the agent stops: nothing it started acts while the harness
            # scores.
            frozen = freeze_agent(self.sandbox, end=True)
            if frozen is not None:
                self.record.append("agent_stopped", agent="harness", **frozen.summary())
            _score(self.task, self.sandbox, self.config, self.outcome, self.stats, self.record)
            if after_run is not None:
                after_run(self.sandbox)
        except StateActError as exc:
            self.outcome.fail(error_status(exc, self.outcome.status), str(exc))
        except Exception as exc:  # a bug must still leave a result and no sandbox behind
            log.error("run of %s failed:\n%s", self.task.id, traceback.format_exc())
            self.outcome.fail("error", f"{type(exc).__name__}: {exc}")
        finally:
            if self.sandbox is not None:
                self.sandbox.close()
            if self.selection is not None:
                self.selection.close()
        result = self.outcome.result(self.stats)
        result["sandbox_from_pool"] = self.sandbox_from_pool
        result["set_up_ahead"] = self.set_up_ahead
        if self.selection is not None:
            result.update(self.selection.summary())
        return result

    def _set_up(self, model, gate_model) -> RunContext:
        """Open the sandbox (a resumed run's from its last milestone) and run the task's setup."""
        config, task = self.config, self.task
        if config.best_of == 1:
            model = model or make_model(config.model, config.model_options)
        milestone = last_milestone(self.record.dir) if self.resume else None
        set_up = False
        if milestone is None:  # a warm pool's sandbox when one keeps this config (`--warm`)
            start = open_pooled(config.sandbox, pool_key(self.record.dir))
            self.sandbox, self.sandbox_from_pool = start.sandbox, start.from_pool
            set_up = start.set_up
        else:
            self.sandbox = open_sandbox(config.sandbox, snapshot_of(milestone))
        sandbox_ready_at = round(time.time(), 3)  # `bench density` splits start from setup
        self.outcome.status = "setup"
        if milestone is None and not set_up:
            run_setup(task.config, self.sandbox, task, config.cache_path, before_agent=True)
        self.set_up_ahead = set_up
        started_at = milestone["started_at"] if milestone else time.time()
        self.record.append(
            "setup_done",
            agent="harness",
            started_at=started_at,
            milestone=milestone and milestone["number"],
            sandbox_ready_at=sandbox_ready_at,
            sandbox_from_pool=self.sandbox_from_pool,
            set_up_ahead=set_up,
        )
        return RunContext(
            config=config,
            model=model,
            sandbox=self.sandbox,
            task=task,
            gate_model=gate_model,
            record=self.record,
            stats=self.stats,
            outcome=self.outcome,
            started_at=started_at,
            resume=self.resume,
            milestone=milestone,
        )


def _score(task: Task, sandbox, config: RunConfig, outcome: TaskOutcome, stats, record) -> None:
    """Run the task's postconfig and checker against the sandbox as the agent left it. A judge
    model's calls (WebArena's fuzzy_match) count in the run's cost, as the gate model's do, and
    each is a `judge_call` event of the trajectory: what it read and what it answered."""
    if not task.evaluator or not task.evaluator.func:
        return

    with tempfile.TemporaryDirectory(prefix="stateact-eval-") as work_dir:
        # A postconfig step's `stdout` file lands in the work folder, where `cache_file` reads it.
        try:
            run_setup(
                task.evaluator.postconfig,
                sandbox,
                task,
                config.cache_path,
                outputs_dir=Path(work_dir),
            )
        except StateActError as exc:
            outcome.evaluation_note = f"postconfig failed: {exc}"
        with counting_judge_usage() as judged:
            evaluation = evaluate(
                task,
                SandboxSource(sandbox),
                cache_dir=config.cache_path,
                work_dir=Path(work_dir),
                final_action=outcome.final_action,
                answer=outcome.answer,
            )
    for call in judged.calls:
        record.append("judge_call", agent="judge", **call)
    if judged.usage.prompt_tokens or judged.usage.output_tokens:
        stats.usage.add(judged.usage)
        outcome.judge_usage = judged.usage
    outcome.score = evaluation.score
    outcome.metrics = [metric.model_dump() for metric in evaluation.metrics]
    if evaluation.error:
        outcome.error = evaluation.error
    if evaluation.failure:  # no verdict on the work: the machine could not run the checker
        outcome.fail("evaluation_error", f"the evaluation could not run: {evaluation.failure}")


__all__ = ["run_task", "TaskOutcome", "write_json_atomic"]
