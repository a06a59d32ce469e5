"""Run many tasks headlessly: each in its own sandbox, N at a time, into one suite directory.

    OUT/results.jsonl        one line per finished task (its result.json plus domain, mode and
    GUI counts) OUT/summary.json         what the results add up to (`harness.reports.summary`)
    OUT/report.html          a static table linking to each run's trajectory.html OUT/runs/<task
    id>/      the run directory of each task (see `harness.kernel.records`) OUT/results/…
    the same in OSWorld's layout (`harness.reports.osworld_layout`)

A task that cannot be loaded or is not supported here still gets a run directory with a
result.json (score 0, the reason in `error`), so a suite never stops at one bad task. `resume`
keeps every run that has a result.json and reruns the rest from scratch.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from harness.apps.oracle import is_oracle, oracle_gate_model, oracle_model_factory
from harness.kernel.core import StateActError
from harness.kernel.records import load_events, safe_run_name, write_json_atomic
from harness.kernel.secrets import redact
from harness.reports import summary as summaries
from harness.reports.html_report import write_report, write_trajectory_html
from harness.reports.osworld_layout import write_osworld_results
from harness.run.config import RunConfig
from sandboxes.base import check_parallel_network
from tasks.schema import Task, load_task
from tasks.support import dry_run_record

from .suite_task import ConfiguredModel, ModelFactory, TaskExecutor

log = logging.getLogger(__name__)

TASK_KEYS = {"id", "instruction", "evaluator", "config"}
SUITE_TASKS_FOLDER = "tasks"


def _looks_like_task_file(path: Path) -> bool:
    """Everything that may be a task, including broken ones; index files such as test_all.json
    are not."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return True  # a broken task file still gets a result saying why
    return not isinstance(data, dict) or bool(TASK_KEYS & set(data)) or not data


def _search_root(folder: Path) -> Path:
    """A bundled suite keeps its tasks in `tasks/` beside fixture folders full of unrelated JSON."""
    tasks_folder = folder / SUITE_TASKS_FOLDER
    is_suite = (folder / "build.py").is_file() or (folder / "solutions").is_dir()
    return tasks_folder if is_suite and tasks_folder.is_dir() else folder


def discover_tasks(paths: list[str | Path]) -> list[Path]:
    """Task files named by `paths` (files, or folders searched recursively), in order, without
    repeats."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            root = _search_root(path)
            found += [
                p for p in sorted(root.rglob("*.json")) if p.is_file() and _looks_like_task_file(p)
            ]
        else:
            raise StateActError(f"{path} is neither a task file nor a folder.")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def suite_roots(task_paths: list[Path]) -> list[Path]:
    """Suite folders (with a fixture generator `build.py`) the tasks belong to."""
    roots = []
    for path in task_paths:
        root = path.parent.parent
        if (
            path.parent.name == SUITE_TASKS_FOLDER
            and (root / "build.py").is_file()
            and root not in roots
        ):
            roots.append(root)
    return roots


BUNDLED_SUITES = Path(__file__).resolve().parent.parent / "tasks" / "suites"


def is_bundled(suite_root: Path) -> bool:
    """A suite shipped inside StateAct itself, whose build script is part of the installed code."""
    return suite_root.resolve().is_relative_to(BUNDLED_SUITES)


def foreign_build_scripts(task_paths: list[Path]) -> list[Path]:
    """Build scripts of the tasks' suites that did not ship with StateAct."""
    return [root / "build.py" for root in suite_roots(task_paths) if not is_bundled(root)]


def ensure_suite_fixtures(task_paths: list[Path], foreign: bool = True) -> None:
    """Call `ensure_fixtures()` of every suite the tasks come from, so their input files exist.

    `foreign=False` runs only the build scripts that ship with StateAct: a suite from elsewhere is
    code, and a dry run must not execute it on this machine unless the user asks.
    """
    for root in suite_roots(task_paths):
        if not foreign and not is_bundled(root):
            continue
        spec = importlib.util.spec_from_file_location(
            f"stateact_suite_build_{abs(hash(root))}", root / "build.py"
        )
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            module.ensure_fixtures(root)
        except Exception as exc:  # noqa: BLE001 -- the tasks then report their missing files one by one
            log.warning("building the fixtures of %s failed: %s", root, exc)


def task_domain(task: Task | None, path: Path) -> str:
    """The folder a task sits in; for a bundled suite's `tasks/` folder, the id's middle
    (`lh-calc-001` → calc)."""
    extra = (task.model_extra or {}).get("stateact") if task is not None else None
    if isinstance(extra, dict) and isinstance(extra.get("domain"), str):
        return extra["domain"]
    if path.parent.name != SUITE_TASKS_FOLDER:
        return path.parent.name
    parts = (task.id if task is not None else path.stem).split("-")
    middle = [p for p in parts[1:] if not p.isdigit()]
    return "-".join(middle) or parts[0]


def dry_run(
    paths: list[str | Path],
    cache_dir: Path | None,
    emit: Callable[[dict], None],
    build_fixtures: bool = False,
    allow_host_paths: bool = False,
    apps: dict[str, str] | None = None,
    image: str = "desktop",
    network: bool = False,
) -> list[dict]:
    """`emit` one record per task (runnable, or every reason why not) without running anything.

    `apps` are the applications of the chosen image (None: not checked); with `network` the tasks'
    live pages and installs are not blockers. Only StateAct's own suites build their fixtures
    first; another suite's build script runs only with `build_fixtures` (its tasks otherwise
    report their missing files). Returns the records.
    """
    task_paths = discover_tasks(paths)
    ensure_suite_fixtures(task_paths, foreign=build_fixtures)
    records = []
    for path in task_paths:
        record = dry_run_record(path, cache_dir, allow_host_paths, apps, image, network)
        if path.parent.name == SUITE_TASKS_FOLDER:
            try:
                record["domain"] = task_domain(load_task(path), path)
            except StateActError:
                pass
        emit(record)
        records.append(record)
    return records


def _agent_dir(run_dir: Path, result: dict) -> Path:
    """Where the main agent's trajectory is: the chosen rollout's folder under `--best-of`."""
    chosen = (result.get("best_of") or {}).get("selected")
    return run_dir / f"rollout-{int(chosen)}" if chosen else run_dir


def trajectory_counts(run_dir: Path) -> dict:
    """Main-agent tool calls, and how many of them delegated to the GUI specialist."""
    steps = gui = 0
    for event in load_events(run_dir):
        if event.get("event") != "model_turn" or event.get("agent") != "main":
            continue
        for block in event.get("content", []):
            if block.get("type") == "tool_use":
                steps += 1
                params = block.get("input") or {}
                gui += (
                    block.get("name") == "delegate"
                    and isinstance(params, dict)
                    and params.get("agent") == "gui"
                )
    return {"main_steps": steps, "gui_delegations": gui}


class ResultsFile:
    """results.jsonl: one full line per task, written in one call under a lock and flushed to
    disk."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()

    def task_ids(self) -> set[str]:
        if not self.path.exists():
            return set()
        ids = set()
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                ids.add(json.loads(line)["task_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut short by a kill
        return ids

    def append(self, line: dict) -> None:
        data = (redact(json.dumps(line, default=str)) + "\n").encode("utf-8")
        with self.lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)


class SuiteRun:
    """One suite run: which tasks, where, with which models; `run()` returns the summary."""

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
    ):
        if parallel < 1:
            raise StateActError("--parallel must be at least 1.")
        check_parallel_network(config.sandbox, parallel)
        self.config = config
        self.out_dir = Path(out_dir)
        self.parallel = parallel
        self.resume = resume
        if is_oracle(config.model):
            model_factory = model_factory or oracle_model_factory(config.model)
            gate_model_factory = gate_model_factory or oracle_gate_model
        self.model_factory = model_factory or ConfiguredModel(config)
        self.gate_model_factory = gate_model_factory
        self.on_result = on_result
        self.task_paths = discover_tasks(paths)
        if not self.task_paths:
            raise StateActError(f"no task files found in {', '.join(map(str, paths))}.")
        self.results_file = ResultsFile(self.out_dir / "results.jsonl")
        self.stopping = threading.Event()
        self.executor = TaskExecutor(
            config, self.model_factory, self.gate_model_factory, self.stopping
        )
        self.run_names: dict[Path, str] = {}

    def check_out_dir(self) -> None:
        """A finished or started suite in OUT is continued only with --resume."""
        if self.results_file.path.exists() and not self.resume:
            raise StateActError(
                f"{self.out_dir} already holds a suite run; pass --resume to continue "
                "it or choose another --out."
            )

    def run(self) -> dict:
        self.check_out_dir()
        (self.out_dir / "runs").mkdir(parents=True, exist_ok=True)
        ensure_suite_fixtures(self.task_paths)
        self._name_runs()
        results: dict[Path, dict] = {}
        try:
            self._run_all(results)
        finally:
            summary = self.finish(results)
        return summary

    def _name_runs(self) -> None:
        used: set[str] = set()
        for path in self.task_paths:
            try:
                name = load_task(path).id
            except StateActError:
                name = path.stem
            name = safe_run_name(name)
            unique, n = name, 1
            while unique in used:
                n += 1
                unique = f"{name}-{n}"
            used.add(unique)
            self.run_names[path] = unique

    def _run_all(self, results: dict[Path, dict]) -> None:
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="suite") as pool:
            futures: dict[Future, Path] = {pool.submit(self.run_one, p): p for p in self.task_paths}
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

    def run_dir_of(self, path: Path) -> Path:
        """The task's run folder under OUT/runs (a single path component, never elsewhere)."""
        run_dir = self.out_dir / "runs" / self.run_names[path]
        if run_dir.parent != self.out_dir / "runs":
            raise StateActError(f"the run folder {run_dir} is not inside {self.out_dir / 'runs'}.")
        return run_dir

    def finished_line(self, path: Path) -> dict | None:
        """With --resume, the result line of a run that already has a result.json (written once)."""
        run_dir = self.run_dir_of(path)
        if not (self.resume and (run_dir / "result.json").is_file()):
            return None
        result = json.loads((run_dir / "result.json").read_text())
        line = self._result_line(result, path, run_dir, None)
        if line["task_id"] not in self.results_file.task_ids():
            self.results_file.append(line)
        return line

    def run_one(self, path: Path) -> dict | None:
        if self.stopping.is_set():
            return None
        finished = self.finished_line(path)
        if finished is not None:
            return finished
        run_dir = self.run_dir_of(path)
        if run_dir.exists():
            shutil.rmtree(run_dir)  # an interrupted run: start it again from scratch
        outcome = self.executor.execute(path, run_dir)
        if outcome is None:
            return None
        return self.record(path, run_dir, *outcome)

    def record(self, path: Path, run_dir: Path, result: dict, task: Task | None, **extra) -> dict:
        """Append the finished task's line to results.jsonl, render its trajectory, report it."""
        line = {**self._result_line(result, path, run_dir, task), **extra}
        self.results_file.append(line)
        try:
            for folder in [run_dir, *sorted(run_dir.glob("rollout-*"))]:  # best-of rollouts too
                write_trajectory_html(folder)
        except Exception as exc:  # noqa: BLE001 -- a rendering problem must not lose the result
            log.warning("could not render %s/trajectory.html: %s", run_dir, exc)
        if self.on_result:
            self.on_result(line)
        return line

    def _result_line(self, result: dict, path: Path, run_dir: Path, task: Task | None) -> dict:
        if task is None:
            try:
                task = load_task(path)
            except StateActError:
                task = None
        return {
            **result,
            "domain": task_domain(task, path),
            "preset": self.config.preset,
            "control": self.config.control,
            "model": self.config.model,
            "task_path": str(path),
            "run_dir": str(run_dir.relative_to(self.out_dir)),
            "options": result.get("options") or self.config.options(),
            **trajectory_counts(_agent_dir(run_dir, result)),
        }

    def finish(self, results: dict[Path, dict]) -> dict:
        """Write summary.json and report.html over the tasks that finished, in discovery order."""
        ordered = [results[p] for p in self.task_paths if p in results]
        summary = summaries.summarize(ordered)
        summary.update(
            suite_tasks=len(self.task_paths),
            unfinished=len(self.task_paths) - len(ordered),
            model=self.config.model,
            preset=self.config.preset,
            control=self.config.control,
            written_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        write_json_atomic(self.out_dir / "summary.json", summary)
        write_report(self.out_dir, ordered, summary)
        try:
            write_osworld_results(self.out_dir, ordered)
        except OSError as exc:  # the layout is a convenience; the suite's own files are written
            log.warning("could not write the OSWorld result layout: %s", exc)
        return summary


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
) -> dict:
    """Run every task under `paths` into `out_dir`; returns summary.json's content.

    `model_factory(task)` builds a fresh model per task (default: `config.model`; the oracle for
    `script/oracle`); `gate_model_factory` likewise for the finish gate (default: the gate's
    config). `on_result(line)` is called from a worker thread as each task finishes (the command
    draws its progress display with it).
    """
    suite = SuiteRun(
        paths, config, out_dir, parallel, resume, model_factory, gate_model_factory, on_result
    )
    return suite.run()
