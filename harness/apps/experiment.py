"""`stateact experiment FILE.yaml --out DIR`: the seeds' comparison in one command.

The file names the tasks (paths, and optional `select` globs on task ids), the trials per task, the
parallelism and the arms (a name, a model and any run option by its CLI name). Every arm's every
trial runs as a suite (`run_suite`, which keeps finished runs and reruns the rest) into
`DIR/<arm>/trial-<k>/`; then the tables are written:

    DIR/experiment.json   the file's content, and per arm its exact RunConfig and StateAct version
    DIR/table.json        `harness.reports.experiment_table.build_table`
    DIR/table.md, DIR/table.html   the same, rendered

`write_tables(DIR)` rebuilds the tables from what is there (`stateact experiment --table DIR`).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.kernel.core import StateActError
from harness.kernel.records import write_json_atomic
from harness.reports.experiment_pages import render_html, render_markdown
from harness.reports.experiment_table import build_table
from harness.run.config import RunConfig
from tasks.schema import load_task

from .selection import SuiteOptions
from .suite import discover_tasks, run_suite

ARM_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class ArmSpec(BaseModel):
    """One arm: `name`, `model`, and run options by their CLI names (`preset: no-act`,
    `gate-mode: paper`, `task-state: true`); checked as the command line checks them."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    name: str = Field(pattern=ARM_NAME)
    model: str

    @property
    def options(self) -> dict:
        return dict(self.model_extra or {})


class ExperimentSpec(BaseModel):
    """The experiment file."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(min_length=1)
    """Task files or folders, relative to the experiment file's folder."""
    select: list[str] = Field(default_factory=list)
    """Globs on task ids (or file names without .json); empty: every task found."""
    trials: int = Field(1, ge=1, le=100)
    parallel: int = Field(1, ge=1, le=64)
    arms: list[ArmSpec] = Field(min_length=1)

    @field_validator("arms")
    @classmethod
    def _unique_names(cls, arms: list[ArmSpec]) -> list[ArmSpec]:
        names = [arm.name for arm in arms]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"arm names must be unique; repeated: {', '.join(repeated)}")
        return arms


@dataclass
class Arm:
    """An arm ready to run: its spec and the RunConfig its options make."""

    spec: ArmSpec
    config: RunConfig

    @property
    def name(self) -> str:
        return self.spec.name


def load_experiment(path: str | Path) -> ExperimentSpec:
    """The experiment file, or StateActError saying in one sentence what is wrong with it."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StateActError(f"cannot read the experiment file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        raise StateActError(f"{path} is not valid YAML: {exc}".rstrip(".") + ".") from None
    if not isinstance(data, dict):
        raise StateActError(f"{path} must be a mapping with tasks, trials, parallel and arms.")
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the file"
        raise StateActError(f"{path}: {where}: {problem['msg']}.") from None


def select_tasks(spec: ExperimentSpec, base_dir: Path) -> list[Path]:
    """The task files the experiment runs, in discovery order."""
    paths = discover_tasks([base_dir / p if not Path(p).is_absolute() else p for p in spec.tasks])
    if spec.select:
        paths = [p for p in paths if any(_matches(p, glob) for glob in spec.select)]
    if not paths:
        raise StateActError("the experiment's tasks and select globs match no task file.")
    return paths


def _matches(path: Path, glob: str) -> bool:
    if fnmatch.fnmatchcase(path.stem, glob):
        return True
    try:
        return fnmatch.fnmatchcase(load_task(path).id, glob)
    except StateActError:
        return False


def stateact_version() -> str:
    try:
        return version("stateact")
    except PackageNotFoundError:
        return "unknown"


def arm_description(arm: Arm, trials: int) -> dict:
    """What experiment.json and the tables say about an arm: enough to run it again."""
    config = arm.config.model_dump(mode="json")
    config["model_options"]["api_key"] = None  # never written; the environment supplies it
    return {
        "name": arm.name,
        "model": arm.spec.model,
        "options": arm.spec.options,
        "trials": trials,
        "config": config,
        "stateact_version": stateact_version(),
    }


def _check_same_arms(out_dir: Path, described: list[dict]) -> None:
    """An experiment folder is continued only by the same arms (a changed option would mix runs)."""
    stored_path = out_dir / "experiment.json"
    if not stored_path.is_file():
        return
    stored = {arm["name"]: arm for arm in json.loads(stored_path.read_text())["arms"]}
    for arm in described:
        before = stored.get(arm["name"])
        if before is not None and before["config"] != arm["config"]:
            raise StateActError(
                f"{out_dir} holds arm {arm['name']!r} run with other options; give the changed "
                "arm a new name or choose another --out."
            )


def run_experiment(
    spec: ExperimentSpec,
    arms: list[Arm],
    task_paths: list[Path],
    out_dir: str | Path,
    *,
    on_result: Callable[[str, dict], None] | None = None,
    retry_errors: bool = False,
) -> dict:
    """Run every arm's every trial as a suite (finished runs are kept), then write the tables;
    returns table.json's content. `on_result(arm name, result line)` hears each finished task;
    `retry_errors` runs again the tasks whose last run ended in an error, as `suite` does."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    described = [arm_description(arm, spec.trials) for arm in arms]
    _check_same_arms(out_dir, described)
    write_json_atomic(
        out_dir / "experiment.json",
        {
            **spec.model_dump(mode="json"),
            "task_paths": [str(p) for p in task_paths],
            "arms": described,
        },
    )
    for arm in arms:
        for trial in range(1, spec.trials + 1):
            heard = (lambda line, name=arm.name: on_result(name, line)) if on_result else None
            run_suite(
                task_paths,
                arm.config,
                out_dir / arm.name / f"trial-{trial}",
                parallel=spec.parallel,
                resume=True,
                on_result=heard,
                suite_options=SuiteOptions(retry_errors=retry_errors),
            )
    return write_tables(out_dir)


def arm_lines(arm_dir: Path, trials: int) -> list[dict]:
    """One line per task and trial from the arm's results.jsonl files (the last line of a task wins,
    a line cut short by a kill is skipped); `run_dir` made relative to the arm's folder."""
    lines: list[dict] = []
    for trial in range(1, trials + 1):
        results = arm_dir / f"trial-{trial}" / "results.jsonl"
        if not results.is_file():
            continue
        latest: dict[str, dict] = {}
        for text in results.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(text)
                latest[line["task_id"]] = line
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
        for line in latest.values():
            line["trial"] = trial
            line["run_dir"] = f"trial-{trial}/{line.get('run_dir', '')}"
            lines.append(line)
    return lines


def write_tables(out_dir: str | Path) -> dict:
    """(Re)write table.json, table.md and table.html from DIR's experiment.json and results."""
    out_dir = Path(out_dir)
    stored_path = out_dir / "experiment.json"
    if not stored_path.is_file():
        raise StateActError(f"{out_dir} holds no experiment (experiment.json is missing).")
    stored = json.loads(stored_path.read_text(encoding="utf-8"))
    arms = stored["arms"]
    lines = {arm["name"]: arm_lines(out_dir / arm["name"], int(arm["trials"])) for arm in arms}
    table = build_table([_public(arm) for arm in arms], lines, out_dir)
    write_json_atomic(out_dir / "table.json", table)
    (out_dir / "table.md").write_text(render_markdown(table), encoding="utf-8")
    (out_dir / "table.html").write_text(render_html(table), encoding="utf-8")
    return table


def _public(arm: dict) -> dict:
    return {
        key: arm[key]
        for key in ("name", "model", "options", "trials", "config", "stateact_version")
    }
