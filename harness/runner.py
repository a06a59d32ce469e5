"""Run one task end to end: sandbox, setup, main agent with gate, scoring, run record.

Whatever happens, a run ends with a `result.json` and no sandbox left behind.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.control.main_agent import MainAgent
from harness.kernel.core import BudgetExceeded, Model, StateActError
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord, write_json_atomic
from harness.kernel.resume import restore_main_agent
from harness.run.config import RunConfig
from harness.run.context import RunContext
from sandboxes import SandboxError, discard_snapshot, open_sandbox
from sandboxes.agent_stop import freeze_agent
from subagents import DelegateTool, main_agent_extra_tools
from tasks.evaluate import evaluate
from tasks.getters import SandboxSource
from tasks.schema import Task, load_task
from tasks.setup import GUI_STEPS, run_setup

from .control import StateActHooks, gate_review, run_control
from .control.best_of import Rollout, select_rollout, selection_summary
from .control.display import ScreenUseCounter, keep_off_screen
from .control.memory import remember, with_lessons
from .control.milestones import discard_milestones, last_milestone, snapshot_of
from .models import endpoint_provider, make_model

log = logging.getLogger(__name__)

RESTART_STEPS = GUI_STEPS | {"sleep"}
"""Setup steps a best-of rollout runs again on its snapshot: they start programs, change no file."""


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
    outcome.options = config.options()
    sandbox = None
    selection: BestOf | None = None
    try:
        if config.best_of == 1:
            model = model or make_model(config.model, config.model_options)
        milestone = last_milestone(out_dir) if resume and config.best_of == 1 else None
        sandbox = open_sandbox(config.sandbox, snapshot_of(milestone))
        sandbox_ready_at = round(time.time(), 3)  # `bench density` splits start from setup
        outcome.status = "setup"

        if milestone is None:
            run_setup(task.config, sandbox, task, _cache_dir(config), before_agent=True)
        started_at = milestone["started_at"] if milestone else time.time()
        record.append(
            "setup_done",
            agent="harness",
            started_at=started_at,
            milestone=milestone and milestone["number"],
            sandbox_ready_at=sandbox_ready_at,
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
            resume=resume and config.best_of == 1,
            milestone=milestone,
        )
        if config.best_of > 1:
            selection = BestOf(context, model, gate_model)
            sandbox = selection.run()  # the chosen rollout's sandbox; the setup one is closed
            outcome = selection.adopt(outcome)
        else:
            end = _run_agent(context)
            outcome.status, outcome.final_action = (
                end.status,
                ("FAIL" if end.status == "infeasible" else None),
            )
            if isinstance(end, BudgetExceeded):  # the error column says which budget ended how
                outcome.error = end.message
        # Judging starts when the agent stops: nothing it started acts while the harness scores.
        frozen = freeze_agent(sandbox, end=True)
        if frozen is not None:
            record.append("agent_stopped", agent="harness", **frozen.summary())
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
        if selection is not None:
            selection.close()
    result = outcome.result(stats)
    if selection is not None:
        result.update(selection.summary())
    record.append("result", agent="harness", **result)
    record.write_result(result)
    record.close()
    discard_milestones(out_dir)  # with a result, nothing resumes this run
    if config.memory_dir:
        lessons_from = selection.chosen_dir if selection and selection.chosen_dir else out_dir
        try:
            remember(config.memory_dir, task.id, task.instruction, lessons_from)
        except (StateActError, OSError) as exc:
            log.warning("lessons of %s not stored: %s", task.id, exc)
    return result


def _run_agent(context: RunContext):
    if context.config.control != "stateact":
        return run_control(context)
    counted = context.config.main_display
    if not counted:  # the display belongs to the GUI specialist
        # Landlock needs no_new_privs, which would take sudo away; a root agent could leave the
        # domain anyway: under --agent-sudo the screen is counted, not walled off.
        unavailable = (
            "--agent-sudo gives the agent root, which no Landlock domain holds"
            if context.config.sandbox.agent_sudo
            else keep_off_screen(context.sandbox)
        )
        if unavailable:
            log.warning("the main agent keeps the screen: %s", unavailable)
            context.record.append(
                "display_isolation_unavailable", agent="harness", reason=unavailable
            )
            counted = True  # its screen use is counted instead
    hooks = StateActHooks(context)
    delegate = DelegateTool(context) if context.config.subagents.enabled else None
    delegate = hooks.wrap_delegate(delegate)
    agent = MainAgent(
        context,
        review=hooks.guard_finish(gate_review(context, hooks.on_decision), context.record),
        tools=[*([delegate] if delegate is not None else []), *main_agent_extra_tools(context)],
        hooks=[*hooks.loop_hooks, *([ScreenUseCounter()] if counted else [])],
    )
    context.outcome.status = "running"
    if context.resume:
        restore_main_agent(
            agent, context.record, context.sandbox, since_event_index=context.since_event_index
        )
    hooks.attach(agent)
    return agent.run(with_lessons(context))


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
            run_setup(replayed, sandbox, base.task, _cache_dir(base.config))
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
            end = _run_agent(context)
            outcome.status = end.status
            outcome.final_action = "FAIL" if end.status == "infeasible" else None
            if isinstance(end, BudgetExceeded):
                outcome.error = end.message
        except StateActError as exc:
            outcome.fail(_error_status(exc, outcome.status), str(exc))
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
        """The top-level outcome takes the chosen rollout's status and gate record."""
        chosen = self.results[self.chosen.index - 1]
        outcome.status = chosen["status"]
        outcome.error = chosen["error"]
        outcome.final_action = "FAIL" if chosen["status"] == "infeasible" else None
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


def _score(task: Task, sandbox, config: RunConfig, outcome: TaskOutcome) -> None:
    """Run the task's postconfig and checker against the sandbox as the agent left it."""
    if not task.evaluator or not task.evaluator.func:
        return

    with tempfile.TemporaryDirectory(prefix="stateact-eval-") as work_dir:
        # A postconfig step's `stdout` file lands in the work folder, where `cache_file` reads it.
        try:
            run_setup(
                task.evaluator.postconfig,
                sandbox,
                task,
                _cache_dir(config),
                outputs_dir=Path(work_dir),
            )
        except StateActError as exc:
            outcome.evaluation_note = f"postconfig failed: {exc}"
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
    if evaluation.failure:  # no verdict on the work: the machine could not run the checker
        outcome.fail("evaluation_error", f"the evaluation could not run: {evaluation.failure}")


def _cache_dir(config: RunConfig) -> Path | None:
    return Path(config.cache_dir) if config.cache_dir else None


def _error_status(exc: StateActError, phase: str) -> str:
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
        self.gate_rounds = 0
        self.gate_passed: bool | None = None
        self.evaluation_note: str | None = None
        self.options: dict = {}
        """The run's ablation switches (`RunConfig.options`)."""
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
        }


__all__ = ["run_task", "TaskOutcome", "write_json_atomic"]
