"""One suite task from its file to a run directory with a result.json: what a suite worker does.

The local runner calls it on its threads; the Ray runner calls it on the node that holds the
task's sandbox. Whatever happens, the run directory ends with a result.json (score 0 and the
reason when the task could not run), except when the suite is stopping.
"""

from __future__ import annotations

import logging
import shutil
import threading
import traceback
from collections.abc import Callable
from pathlib import Path

from harness.apps.osworld2_run import is_task_module, run_osworld2_task
from harness.kernel.core import Model, StateActError
from harness.kernel.records import RESULT_FIELDS, write_json_atomic
from harness.models import make_model
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes.images.apps import declared_apps, definition_name
from tasks.schema import Task, load_task
from tasks.support import unsupported_reason

log = logging.getLogger(__name__)

ModelFactory = Callable[[Task], Model]
ENVIRONMENT_STATUSES = ("sandbox_error", "setup_error")
ENVIRONMENT_RETRIES = 1


class SuiteInterrupted(BaseException):  # noqa: N818 -- not an Exception, so run_task's safety net lets it through
    """Raised inside a running task when the suite is stopping; the task leaves no result.json."""


def bare_result(task_id: str, status: str, error: str) -> dict:
    """result.json of a task that was never run: score 0 with the reason."""
    result = {name: 0 for name in RESULT_FIELDS}
    result.update(
        task_id=task_id,
        score=0.0,
        success=False,
        status=status,
        error=error,
        cost_usd=0.0,
        gate_passed=None,
        duration_s=0.0,
        metrics=[],
    )
    return result


def image_apps(backend: str, image: str) -> dict[str, str] | None:
    """The OSWorld applications a docker image declares; None (not checked) for other backends
    and for images built from no definition here."""
    if backend != "docker":
        return None
    try:
        return declared_apps(image)
    except StateActError:
        return None


def write_bare(run_dir: Path, result: dict) -> dict:
    """Write `result` as the run's result.json and return it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / "result.json", result)
    return result


class ConfiguredModel:
    """The model `config.model` names, fresh per task (a class, so it pickles to a Ray node)."""

    def __init__(self, config: RunConfig):
        self.config = config

    def __call__(self, task: Task) -> Model:
        return make_model(self.config.model, self.config.model_options)


class TaskExecutor:
    """Runs task files under one config with per-task models; `stopping` ends runs at their next
    turn."""

    def __init__(
        self,
        config: RunConfig,
        model_factory: ModelFactory,
        gate_model_factory: ModelFactory | None,
        stopping: threading.Event | None = None,
    ):
        self.config = config
        self.model_factory = model_factory
        self.gate_model_factory = gate_model_factory
        self.stopping = stopping or threading.Event()

    def execute(self, path: Path, run_dir: Path) -> tuple[dict, Task | None] | None:
        """Run the task file `path` into the empty `run_dir`; (result, task), or None when
        stopped."""
        task = None
        try:
            if self.config.osworld2 is not None and is_task_module(path):
                return self._run_osworld2(path, run_dir), None
            task = load_task(path)
            result = self._run_loaded(task, run_dir)
        except SuiteInterrupted:
            return None
        except StateActError as exc:
            result = write_bare(run_dir, bare_result(path.stem, "invalid_task", str(exc)))
        except Exception as exc:  # noqa: BLE001 -- one task's crash must not end the suite
            log.error("task %s crashed:\n%s", path, traceback.format_exc())
            task_id = task.id if task else path.stem
            error = f"{type(exc).__name__}: {exc}"
            result = write_bare(run_dir, bare_result(task_id, "error", error))
        return result, task

    def _run_loaded(self, task: Task, run_dir: Path) -> dict:
        task.allow_host_paths = task.allow_host_paths or self.config.allow_host_paths
        cache_dir = Path(self.config.cache_dir) if self.config.cache_dir else None
        sandbox = self.config.sandbox
        reason = unsupported_reason(
            task,
            cache_dir,
            apps=image_apps(sandbox.backend, sandbox.image),
            image=definition_name(sandbox.image),
            network=sandbox.network,
            agent_sudo=sandbox.agent_sudo,
        )
        if reason is not None:
            return write_bare(run_dir, bare_result(task.id, "unsupported", reason))
        for attempt in range(1, ENVIRONMENT_RETRIES + 2):
            try:
                model, gate_model = self._models(task)
            except StateActError as exc:
                return write_bare(run_dir, bare_result(task.id, "model_error", str(exc)))
            result = run_task(
                task,
                self.config,
                run_dir,
                model=model,
                gate_model=gate_model,
                on_turn=self._check_stop,
            )
            # A desktop that did not come up under load is the machine's fault, not the model's:
            # try once more in a fresh sandbox, but never after the model has spent a turn.
            environment_failed = (
                result["status"] in ENVIRONMENT_STATUSES and not result["model_turns"]
            )
            if not environment_failed or attempt > ENVIRONMENT_RETRIES or self.stopping.is_set():
                return {**result, "attempts": attempt}
            log.warning(
                "%s: %s (%s); retrying in a fresh sandbox",
                task.id,
                result["status"],
                result["error"],
            )
            shutil.rmtree(run_dir, ignore_errors=True)
        raise AssertionError("unreachable")

    def _run_osworld2(self, path: Path, run_dir: Path) -> dict:
        """An OSWorld 2.0 task module, its models built for a placeholder of the task."""
        stand_in = Task(id=path.stem, instruction="(an OSWorld 2.0 task module)")
        try:
            model, gate_model = self._models(stand_in)
        except StateActError as exc:
            return write_bare(run_dir, bare_result(path.stem, "model_error", str(exc)))
        return run_osworld2_task(
            path, self.config, run_dir, model=model, gate_model=gate_model, on_turn=self._check_stop
        )

    def _models(self, task: Task) -> tuple:
        """The task's model and gate model; one of each per rollout under `--best-of`."""
        copies = self.config.best_of

        def build(factory):
            if factory is None:
                return None
            return factory(task) if copies == 1 else [factory(task) for _ in range(copies)]

        return build(self.model_factory), build(self.gate_model_factory)

    def _check_stop(self, stats) -> None:
        if self.stopping.is_set():
            raise SuiteInterrupted()
