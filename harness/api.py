"""StateAct from Python: the same entry points the `stateact` command uses, with keyword arguments.

    from harness.api import run_task, run_batch, run_code
    result = run_task("task.json", model="anthropic/claude-sonnet-4-5", out_dir="runs/t1")

Each function takes either a ready `RunConfig` (`config=`) or builds one from `model` plus keyword
overrides (`image`, `backend`, `gate_model`, `max_turns`, `max_cost`, `max_time`, `preset`), or from
a run config (`config_file=` a YAML/TOML file, `options=` a dict of the same keys), validated by the
same models as the command line's `--config` (`harness.apps.run_options`): an unknown key raises
StateActError naming it. A bad model spec, a missing key, or a cost cap on a model without a known
price raises StateActError before anything runs. See docs/python-api.md for a runnable example.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from harness import runner
from harness.apps import batch, coding, suite
from harness.apps.oracle import is_oracle
from harness.apps.run_options import (
    config_from_options,
    read_run_config,
    render_trajectory,
    validate_options,
)
from harness.apps.selection import Selection, SuiteOptions
from harness.kernel.core import Model, StateActError
from harness.models import make_model
from harness.models.pricing import check_cost_cap
from harness.run.config import RunConfig


def make_config(
    model: str | None = None,
    *,
    config: RunConfig | None = None,
    image: str | None = None,
    backend: str | None = None,
    gate_model: str | None = None,
    max_turns: int | None = None,
    max_cost: float | None = None,
    max_time: float | None = None,
    preset: str | None = None,
) -> RunConfig:
    """A RunConfig: a copy of `config` (or the defaults) with the given fields set."""
    if config is None and model is None:
        raise StateActError(
            "give a model spec (PROVIDER/NAME, e.g. script/turns.json) or a RunConfig."
        )
    config = (config or RunConfig()).model_copy(deep=True)
    setters = (
        (model, lambda v: setattr(config, "model", v)),
        (image, lambda v: setattr(config.sandbox, "image", v)),
        (backend, lambda v: setattr(config.sandbox, "backend", v)),
        (gate_model, lambda v: setattr(config.gate, "model", v)),
        (max_turns, lambda v: setattr(config.loop, "max_turns", v)),
        (max_cost, lambda v: setattr(config.loop, "max_cost_usd", v)),
        (max_time, lambda v: setattr(config.loop, "max_wall_s", v)),
        (preset, lambda v: setattr(config, "preset", v)),
    )
    for value, setter in setters:
        if value is not None:
            setter(value)
    return config


def from_run_config(
    command: str, model: str | None, config_file: str | Path | None, options: dict | None
):
    """(RunConfig, the validated options) of a run config file plus `options`; `model`, when
    given, wins over the file's."""
    values = read_run_config(command, config_file, options or {})
    if model is not None:
        values["model"] = model
    validated = validate_options(command, values)
    return config_from_options(validated), validated


def check_model(config: RunConfig, given: Model | None = None) -> None:
    """Fail before any sandbox on a bad model spec, a missing key or an unenforceable cost cap."""
    if given is not None or is_oracle(config.model):
        return
    model = make_model(config.model, config.model_options)
    check_cost_cap(model, config.model, config.loop.max_cost_usd)


def run_task(
    task,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    resume: bool = False,
    agent_model: Model | None = None,
    gate_model_object: Model | None = None,
    config_file: str | Path | None = None,
    options: dict | None = None,
    **overrides,
) -> dict:
    """Run one task file (or `Task`) into `out_dir`; returns result.json's content (and writes
    the run's trajectory.html)."""
    if config_file is not None or options:
        config, _ = from_run_config("run", model, config_file, options)
    config = make_config(model, config=config, **overrides)
    check_model(config, agent_model)
    result = runner.run_task(
        task, config, out_dir, resume=resume, model=agent_model, gate_model=gate_model_object
    )
    render_trajectory(Path(out_dir))
    return result


def run_suite(
    paths,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    parallel: int = 1,
    resume: bool = False,
    suite_options: SuiteOptions | None = None,
    config_file: str | Path | None = None,
    options: dict | None = None,
    warm: int | None = None,
    **overrides,
) -> dict:
    """Run every task under `paths`, `parallel` at a time, into `out_dir`; returns summary.json's
    content. `suite_options` pick tasks and trials (`SuiteOptions`); a run config's suite keys
    (parallel, filter, slice, shuffle, trials, retry_errors, force, warm) are honoured too.
    `warm` N keeps N sandboxes started ahead of the tasks (sandboxes/pool.py)."""
    if config_file is not None or options:
        config, given = from_run_config("suite", model, config_file, options)
        parallel = given.parallel or parallel
        resume = resume or given.resume
        suite_options = suite_options or SuiteOptions(
            selection=Selection(given.filter, given.slice, given.shuffle, given.trials),
            retry_errors=given.retry_errors,
            force=given.force,
            warm=given.warm,
        )
    if warm is not None:
        suite_options = replace(suite_options or SuiteOptions(), warm=warm)
    config = make_config(model, config=config, **overrides)
    check_model(config)
    return suite.run_suite(
        list(paths),
        config,
        out_dir,
        parallel=parallel,
        resume=resume,
        suite_options=suite_options,
    )


def run_batch(
    instruction: str,
    files,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    parallel: int = 1,
    resume: bool = False,
    check: str | Path | None = None,
    config_file: str | Path | None = None,
    options: dict | None = None,
    warm: int | None = None,
    **overrides,
) -> list[dict]:
    """Run `instruction` over every file (paths or glob patterns); returns summary.csv's rows as
    dicts. `warm` N (or the run config's `warm`) keeps N sandboxes started ahead of the files."""
    if config_file is not None or options:
        config, given = from_run_config("batch", model, config_file, options)
        warm = given.warm if warm is None else warm
    config = make_config(model, config=config, **overrides)
    check_model(config)
    options = batch.BatchOptions(parallel=parallel, resume=resume, check=check, warm=warm or 0)
    return batch.run_batch(instruction, list(files), out_dir, config, options)


def run_code(
    repo: str | Path,
    instruction: str,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    apply: bool = False,
    **overrides,
) -> dict:
    """Carry out `instruction` on a copy of `repo`; returns the summary (gate verdict, changed
    files, patch path)."""
    config = make_config(model, config=config, **overrides)
    options = coding.CodeOptions(apply=apply)
    return asdict(coding.run_code(repo, instruction, config, out_dir, options))


__all__ = [
    "RunConfig",
    "StateActError",
    "make_config",
    "SuiteOptions",
    "Selection",
    "run_task",
    "run_suite",
    "run_batch",
    "run_code",
]
