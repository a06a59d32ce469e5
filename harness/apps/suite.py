"""Run many tasks headlessly: each in its own sandbox, N at a time, into one suite directory.

    OUT/results.jsonl        one line per finished task (its result.json plus domain, mode and
    GUI counts) OUT/summary.json         what the results add up to (`harness.reports.summary`)
    OUT/report.html          a static table linking to each run's trajectory.html OUT/runs/<task
    id>/      the run directory of each task (see `harness.kernel.records`) OUT/results/…
    the same in OSWorld's layout (`harness.reports.osworld_layout`)

A task that cannot be loaded or is not supported here still gets a run directory with a
result.json (score 0, the reason in `error`), so a suite never stops at one bad task. `resume`
keeps every run that has a result.json and reruns the rest from scratch; with `retry_errors` the
runs that ended in an error (`outdir.ERROR_STATUSES`) are moved to OUT/history/ and run again, their
earlier lines staying in results.jsonl while the summary counts the latest. OUT is locked for the
run and its configuration kept in OUT/run.json (`harness.apps.outdir`).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from harness.apps.oracle import is_oracle, oracle_gate_model, oracle_model_factory
from harness.apps.osworld2_run import is_task_module, resumable
from harness.apps.osworld2_services import osworld2_services
from harness.apps.sandbox_options import pool_config
from harness.kernel.core import StateActError
from harness.kernel.records import safe_run_name, write_json_atomic
from harness.reports import summary as summaries
from harness.reports.html_report import write_report, write_trajectory_html
from harness.reports.osworld_layout import write_osworld_results
from harness.reports.steps import agent_dir, trajectory_counts
from harness.run.config import RunConfig
from harness.runner import pool_key, setup_ahead
from sandboxes.base import check_parallel_network
from sandboxes.pool import forget_planned, warm_pool
from tasks.schema import Task, load_task
from tasks.webarena.deployment import configure as configure_webarena

from .outdir import (
    OutLock,
    ResultsFile,
    check_identity,
    is_error,
    move_to_history,
    run_identity,
)
from .selection import SuiteOptions, trial_stats
from .suite_discovery import (  # noqa: F401 -- re-exported: the suite's public names
    BUNDLED_SUITES,
    SUITE_TASKS_FOLDER,
    discover_tasks,
    dry_run,
    ensure_suite_fixtures,
    foreign_build_scripts,
    is_bundled,
    suite_roots,
    task_domain,
)
from .suite_task import ConfiguredModel, ModelFactory, TaskExecutor

log = logging.getLogger(__name__)


class SuiteRun:
    """One suite run: which tasks, where, with which models; `run()` returns the summary.

    Each unit of work is a task file, or (file, trial) when the suite runs several trials.
    """

    def __init__(
        self,
        paths,
        config: RunConfig,
        out_dir,
        parallel: int,
        resume: bool,
        model_factory: ModelFactory | None,
        gate_model_factory: ModelFactory | None,
        on_result: Callable[[dict], None] | None = None,
        suite_options: SuiteOptions | None = None,
    ):
        if parallel < 1:
            raise StateActError("--parallel must be at least 1.")
        check_parallel_network(config.sandbox, parallel)
        self.config = config
        self.out_dir = Path(out_dir)
        self.parallel = parallel
        self.resume = resume
        self.plan = suite_options or SuiteOptions()
        pool_config(self.plan.warm, config.sandbox)  # a bad --warm fails before any task
        if self.plan.retry_errors and not resume:
            raise StateActError(
                "--retry-errors goes with --resume (it reruns what errored in OUT)."
            )
        if is_oracle(config.model):
            model_factory = model_factory or oracle_model_factory(config.model)
            gate_model_factory = gate_model_factory or oracle_gate_model
        self.model_factory = model_factory or ConfiguredModel(config)
        self.gate_model_factory = gate_model_factory
        self.on_result = on_result
        discovered = discover_tasks(paths)
        if not discovered:
            raise StateActError(f"no task files found in {', '.join(map(str, paths))}.")
        self.task_paths = self.plan.selection.apply(discovered, task_name)
        if not self.task_paths:
            raise StateActError(
                f"the selection (--filter/--slice) leaves none of the {len(discovered)} task(s)."
            )
        trials = self.plan.selection.trials
        self.work: list = (
            list(self.task_paths)
            if trials == 1
            else [(p, t) for p in self.task_paths for t in range(1, trials + 1)]
        )
        self.results_file = ResultsFile(self.out_dir / "results.jsonl")
        self.stopping = threading.Event()
        self.executor = TaskExecutor(
            config, self.model_factory, self.gate_model_factory, self.stopping
        )
        self.run_names: dict = {}

    def check_out_dir(self) -> None:
        """A finished or started suite in OUT is continued only with --resume."""
        if self.results_file.path.exists() and not self.resume:
            raise StateActError(
                f"{self.out_dir} already holds a suite run; pass --resume to continue "
                "it or choose another --out."
            )

    def identity(self) -> dict:
        return run_identity(
            self.config.model,
            self.config.preset,
            self.config.control,
            [str(p) for p in self.task_paths],
            options=self.config.options(),
            trials=self.plan.selection.trials,
        )

    def run(self) -> dict:
        with OutLock(self.out_dir, "a suite"):
            self.check_out_dir()
            check_identity(self.out_dir, self.identity(), self.resume, self.plan.force)
            (self.out_dir / "runs").mkdir(parents=True, exist_ok=True)
            ensure_suite_fixtures(self.task_paths)
            self._name_runs()
            results: dict = {}
            # OSWorld 2.0's websites and GitLab, if it names them: started once, for every task;
            # the pool's sandboxes are started on their network (the config it returns)
            with osworld2_services(self.config) as config:
                self.config = self.executor.config = config
                try:
                    with warm_pool(pool_config(self.plan.warm, self.config.sandbox)) as pool:
                        if pool is not None:
                            pool.plan(self._set_up_ahead())
                        self._run_all(results)
                finally:
                    summary = self.finish(results)
        return summary

    def _name_runs(self) -> None:
        used: set[str] = set()
        for key in self.work:
            path, trial = _split(key)
            name = safe_run_name(task_name(path))
            unique, n = name, 1
            while unique in used:
                n += 1
                unique = f"{name}-{n}"
            if trial is not None:
                unique = f"{name}.trial-{trial}" if n == 1 else f"{unique}.trial-{trial}"
            used.add(unique)
            self.run_names[key] = unique

    def _set_up_ahead(self) -> list:
        """The tasks a warm pool sets up ahead: every one that will run but the first
        `--parallel` (those start at once, before a pooled sandbox could be set up for them)."""
        waiting = [key for key in self.work if self._will_run(key)][self.parallel :]
        return [
            (pool_key(self.run_dir_of(key)), setup_ahead(_split(key)[0], self.config))
            for key in waiting
            if not (self.config.osworld2 is not None and is_task_module(_split(key)[0]))
        ]

    def _will_run(self, key) -> bool:
        """Whether `run_one` will run this task (not a finished one kept by --resume)."""
        result_file = self.run_dir_of(key) / "result.json"
        if not (self.resume and result_file.is_file()):
            return True
        return self.plan.retry_errors and is_error(json.loads(result_file.read_text()))

    def _run_all(self, results: dict) -> None:
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="suite") as pool:
            futures: dict[Future, object] = {pool.submit(self.run_one, k): k for k in self.work}
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    for future in done:
                        line = future.result()
                        if line is not None:
                            results[futures[future]] = line
            except BaseException:
                # Ctrl-C: queued tasks never start, running ones stop at their next model turn and
                # close their sandboxes; what finished keeps its result for --resume.
                self.stopping.set()
                for future in pending:
                    future.cancel()
                raise

    def run_dir_of(self, key) -> Path:
        """The task's run folder under OUT/runs (a single path component, never elsewhere)."""
        run_dir = self.out_dir / "runs" / self.run_names[key]
        if run_dir.parent != self.out_dir / "runs":
            raise StateActError(f"the run folder {run_dir} is not inside {self.out_dir / 'runs'}.")
        return run_dir

    def finished_line(self, key) -> dict | None:
        """With --resume, the result line of a run that already has a result.json (written once);
        None when it must run (again: with --retry-errors, an errored run moves to history/)."""
        run_dir = self.run_dir_of(key)
        if not (self.resume and (run_dir / "result.json").is_file()):
            return None
        result = json.loads((run_dir / "result.json").read_text())
        path, trial = _split(key)
        line = self._result_line(result, path, run_dir, None, trial)
        if self.plan.retry_errors and is_error(line):
            if line["run_dir"] not in self.results_file.run_dirs():
                self.results_file.append(line)  # the earlier attempt stays in the history
            move_to_history(run_dir, self.out_dir)
            return None
        if line["run_dir"] not in self.results_file.run_dirs():
            self.results_file.append(line)
        return line

    def run_one(self, key) -> dict | None:
        if self.stopping.is_set():
            return None
        finished = self.finished_line(key)
        if finished is not None:
            return finished
        run_dir = self.run_dir_of(key)
        if run_dir.exists() and not resumable(run_dir, self.config.control):
            shutil.rmtree(run_dir)  # an interrupted run: start it again from scratch
        path, trial = _split(key)
        try:
            outcome = self.executor.execute(path, run_dir)
        finally:
            forget_planned(pool_key(run_dir))  # a skipped task's set-up sandbox is closed
        if outcome is None:
            return None
        result, task = outcome
        return self.record(key, run_dir, result, task)

    def record(self, key, run_dir: Path, result: dict, task: Task | None, **extra) -> dict:
        """Append the finished task's line to results.jsonl, render its trajectory, report it."""
        path, trial = _split(key)
        line = {**self._result_line(result, path, run_dir, task, trial), **extra}
        self.results_file.append(line)
        try:
            for folder in [run_dir, *sorted(run_dir.glob("rollout-*"))]:  # best-of rollouts too
                write_trajectory_html(folder)
        except Exception as exc:  # noqa: BLE001 -- a rendering problem must not lose the result
            log.warning("could not render %s/trajectory.html: %s", run_dir, exc)
        if self.on_result:
            self.on_result(line)
        return line

    def _result_line(
        self, result: dict, path: Path, run_dir: Path, task: Task | None, trial: int | None = None
    ) -> dict:
        if task is None:
            try:
                task = load_task(path)
            except StateActError:
                task = None
        line = {
            **result,
            "domain": task_domain(task, path),
            "preset": self.config.preset,
            "control": self.config.control,
            "model": self.config.model,
            "task_path": str(path),
            "run_dir": str(run_dir.relative_to(self.out_dir)),
            "options": result.get("options") or self.config.options(),
            **trajectory_counts(agent_dir(run_dir, result)),
        }
        if trial is not None:
            line["trial"] = trial
        return line

    def finish(self, results: dict) -> dict:
        """Write summary.json and report.html over the tasks that finished, in discovery order."""
        ordered = [results[k] for k in self.work if k in results]
        summary = summaries.summarize(ordered)
        summary.update(
            suite_tasks=len(self.work),
            unfinished=len(self.work) - len(ordered),
            errors=sum(1 for line in ordered if is_error(line)),
            retried=self.results_file.retried(),
            model=self.config.model,
            preset=self.config.preset,
            control=self.config.control,
            written_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        trials = trial_stats(ordered)
        if trials is not None:
            summary["trials"] = trials
        write_json_atomic(self.out_dir / "summary.json", summary)
        write_report(self.out_dir, ordered, summary)
        try:
            write_osworld_results(self.out_dir, ordered)
        except OSError as exc:  # the layout is a convenience; the suite's own files are written
            log.warning("could not write the OSWorld result layout: %s", exc)
        return summary


def _split(key) -> tuple[Path, int | None]:
    """(task file, trial number or None) of a unit of work."""
    return key if isinstance(key, tuple) else (key, None)


def task_name(path: Path) -> str:
    """A task's id, or its file name's stem when it does not load."""
    try:
        return load_task(path).id
    except StateActError:
        return path.stem


def run_suite(
    paths: list[str | Path],
    config: RunConfig,
    out_dir: str | Path,
    *,
    parallel: int = 1,
    resume: bool = False,
    model_factory: ModelFactory | None = None,
    gate_model_factory: ModelFactory | None = None,
    on_result: Callable[[dict], None] | None = None,
    suite_options: SuiteOptions | None = None,
) -> dict:
    """Run every task under `paths` into `out_dir`; returns summary.json's content.

    `model_factory(task)` builds a fresh model per task (default: `config.model`; the oracle for
    `script/oracle`); `gate_model_factory` likewise for the finish gate (default: the gate's
    config). `on_result(line)` is called from a worker thread as each task finishes (the command
    draws its progress display with it). `suite_options` select tasks and trials and say how
    a resumed OUT is treated (`SuiteOptions`).
    """
    # WebArena's sites, and how many tasks share them (a reset-needing task may not, unhooked)
    configure_webarena(config.sites, parallel, config.cache_dir)
    suite = SuiteRun(
        paths,
        config,
        out_dir,
        parallel,
        resume,
        model_factory,
        gate_model_factory,
        on_result,
        suite_options,
    )
    return suite.run()
