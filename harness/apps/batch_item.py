"""One file of a batch: where its input and output go, the task it runs as, and its run."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from harness.kernel.core import Model, StateActError
from harness.kernel.records import write_json_atomic
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Evaluator, SetupStep, Task

ModelFactory = Callable[[], Model]


@dataclass
class BatchItem:
    """One input file and where everything about it goes."""

    source: Path
    """The input file on the host."""
    sandbox_path: str
    """Where the input file is put in the sandbox (/home/user/<name>)."""
    instruction: str
    """The instruction with this file's placeholders filled in."""
    output_sandbox: str
    """The file copied out after the run: a path the instruction names, else the input's own
    path."""
    output_host: Path
    """Where that file lands on the host."""
    run_dir: Path
    """This file's run directory."""

    @property
    def name(self) -> str:
        return self.source.name


@dataclass(frozen=True)
class BatchJob:
    """What every file of one batch runs with."""

    config: RunConfig
    check_task: Task | None = None
    """The task whose evaluator scores each output (`--check`), or None."""
    resume: bool = False
    """Read finished files back and continue started ones."""
    model_factory: ModelFactory | None = None
    """Builds each file's model (None: from the config's spec)."""
    gate_model_factory: ModelFactory | None = None
    """Builds each file's gate model (None: from the config)."""

    def resumed(self, resume: bool) -> BatchJob:
        return replace(self, resume=resume)


def item_task(item: BatchItem, check: Task | None) -> Task:
    """The task one file runs as: its file copied in, and the check's evaluator pointed at its
    output."""
    evaluator = Evaluator(func=[])
    if check is not None:
        evaluator = check.evaluator.model_copy(deep=True)
        evaluator.result = _point_at(evaluator.result, item.output_sandbox)
    download = {"files": [{"url": str(item.source), "path": item.sandbox_path}]}
    return Task(
        id=f"batch-{item.name}",
        instruction=item.instruction,
        config=[SetupStep(type="download", parameters=download)],
        evaluator=evaluator,
        base_dir=check.base_dir if check is not None else item.source.parent,
        extra_roots=[item.source],  # the input file the user named is the one host file it may use
    )


def _point_at(result, path: str):
    """The result getter(s) with each `vm_file` getter reading `path`."""
    if isinstance(result, list):
        return [_point_at(entry, path) for entry in result]
    if isinstance(result, dict) and result.get("type") == "vm_file":
        result = copy.deepcopy(result)
        result["path"] = path
        result.setdefault("dest", PurePosixPath(path).name)
    return result


def run_item(item: BatchItem, job: BatchJob) -> dict:
    """Run (or, on resume, read back) one file's task and return its summary row."""
    check_task = job.check_task
    task = item_task(item, check_task)

    def copy_back(sandbox) -> None:
        try:
            sandbox.copy_out(item.output_sandbox, item.output_host)
        except FileNotFoundError:
            raise StateActError(
                f"the run left no file at {item.output_sandbox} to copy out."
            ) from None

    model = job.model_factory() if job.model_factory else None
    gate_model = job.gate_model_factory() if job.gate_model_factory else None
    # A finished file (result.json) is read back as is; a started one continues from its trajectory.
    resume = job.resume and (item.run_dir / "trajectory.jsonl").exists()
    result = run_task(
        task,
        job.config,
        item.run_dir,
        resume=resume,
        model=model,
        gate_model=gate_model,
        after_run=copy_back,
    )
    row = {
        "file": str(item.source),
        "status": result["status"],
        "gate_passed": result.get("gate_passed"),
        "cost_usd": result.get("cost_usd", 0.0),
        "output": str(item.output_host) if item.output_host.exists() else "",
        "score": result.get("score") if check_task is not None else None,
        "error": result.get("error") or "",
    }
    write_json_atomic(
        item.run_dir / "batch_item.json", {**row, "output_sandbox": item.output_sandbox}
    )
    return row
