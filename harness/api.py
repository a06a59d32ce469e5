"""StateAct from Python: the same entry points the `stateact` command uses, with keyword arguments.

    from harness.api import run_task, run_batch, run_code
    result = run_task("task.json", model="anthropic/claude-sonnet-4-5", out_dir="runs/t1")

Each function takes either a ready `RunConfig` (`config=`) or builds one from `model` plus keyword
overrides (`image`, `backend`, `gate_model`, `max_turns`, `max_cost`, `max_time`, `preset`). See
docs/python-api.md for a runnable example.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from harness import runner
from harness.apps import batch, coding, suite
from harness.kernel.core import Model, StateActError
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
    for value, setter in (
        (model, lambda v: setattr(config, "model", v)),
        (image, lambda v: setattr(config.sandbox, "image", v)),
        (backend, lambda v: setattr(config.sandbox, "backend", v)),
        (gate_model, lambda v: setattr(config.gate, "model", v)),
        (max_turns, lambda v: setattr(config.loop, "max_turns", v)),
        (max_cost, lambda v: setattr(config.loop, "max_cost_usd", v)),
        (max_time, lambda v: setattr(config.loop, "max_wall_s", v)),
        (preset, lambda v: setattr(config, "preset", v)),
    ):
        if value is not None:
            setter(value)
    return config


def run_task(
    task,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    resume: bool = False,
    agent_model: Model | None = None,
    gate_model_object: Model | None = None,
    **overrides,
) -> dict:
    """Run one task file (or `Task`) into `out_dir`; returns result.json's content."""
    config = make_config(model, config=config, **overrides)
    return runner.run_task(
        task, config, out_dir, resume=resume, model=agent_model, gate_model=gate_model_object
    )


def run_suite(
    paths,
    model: str | None = None,
    *,
    out_dir: str | Path,
    config: RunConfig | None = None,
    parallel: int = 1,
    resume: bool = False,
    **overrides,
) -> dict:
    """Run every task under `paths`, `parallel` at a time, into `out_dir`; returns summary.json's
    content."""
    config = make_config(model, config=config, **overrides)
    return suite.run_suite(list(paths), config, out_dir, parallel=parallel, resume=resume)


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
    **overrides,
) -> list[dict]:
    """Run `instruction` over every file (paths or glob patterns); returns summary.csv's rows as
    dicts."""
    config = make_config(model, config=config, **overrides)
    options = batch.BatchOptions(parallel=parallel, resume=resume, check=check)
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
    "run_task",
    "run_suite",
    "run_batch",
    "run_code",
]
