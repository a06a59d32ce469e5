"""Batch office-file jobs: one instruction over many files, each in its own sandbox and through
the gate.

OUT/<output name>        each file's result, copied out of its sandbox
OUT/runs/<file name>/    each file's run directory (result.json marks it finished)
OUT/summary.csv          one row per file: status, gate verdict, cost, output path, score
"""

from __future__ import annotations

import csv
import glob
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from gates.structural import named_paths
from harness.apps.sandbox_options import pool_config
from harness.kernel.core import StateActError
from harness.kernel.secrets import redact
from harness.run.config import RunConfig
from sandboxes.base import SANDBOX_HOME, check_parallel_network
from sandboxes.pool import warm_pool
from tasks.schema import Task, load_task
from tasks.support import check_references

from .batch_item import BatchItem, BatchJob, ModelFactory, run_item
from .outdir import IDENTITY_NAME, LOCK_NAME, OutLock, check_identity, run_identity
from .ray.batch import run_items_on_ray
from .ray.cluster import RayOptions

SUMMARY_NAME = "summary.csv"
RUNS_DIR = "runs"
SUMMARY_FIELDS = ("file", "status", "gate_passed", "cost_usd", "output", "score", "error")
GLOB_CHARS = set("*?[")


def expand_inputs(patterns: list[str | Path]) -> list[Path]:
    """Input files from paths and (unexpanded) glob patterns, in order, without repeats."""
    if not patterns:
        raise StateActError("no input files given.")
    files: list[Path] = []
    for pattern in map(str, patterns):
        if Path(pattern).is_file():
            matches = [pattern]
        elif GLOB_CHARS & set(pattern):
            matches = sorted(m for m in glob.glob(pattern, recursive=True) if Path(m).is_file())
            if not matches:
                raise StateActError(f"the pattern {pattern!r} matches no files.")
        elif Path(pattern).exists():
            raise StateActError(
                f"{pattern} is a folder; give the files in it (for example {pattern}/*.xlsx)."
            )
        else:
            raise StateActError(f"the input file {pattern} does not exist.")
        for match in matches:
            path = Path(match).resolve()
            if path not in files:
                files.append(path)
    return files


TEMPLATE_PATH = re.compile(
    r"(?:(?:~|/home/user)/[^\s\"'`]*)?\{(?:file|name|stem)\}[^\s\"'`,;:()<>\[\]|]*"
)
"""A placeholder, with the path it is part of (`/home/user/{stem}-out.xlsx`)."""


def fill_instruction(instruction: str, sandbox_path: str) -> str:
    """Fill `{file}` (sandbox path), `{name}` (file name) and `{stem}` (name without extension).

    A filled path with a space in it is put in double quotes, so the gate and the output
    detection read `"/home/user/sales 1.xlsx"` as one path.
    """
    pure = PurePosixPath(sandbox_path)
    if "{file}" not in instruction and "{name}" not in instruction:
        instruction = f"{instruction.strip()}\n\nThe file is {{file}}."
    values = (("{file}", sandbox_path), ("{name}", pure.name), ("{stem}", pure.stem))

    def fill(match: re.Match) -> str:
        token = match.group(0)
        trailing = token[len(token.rstrip(".")) :]
        text = token[: len(token) - len(trailing)]
        for key, value in values:
            text = text.replace(key, value)
        is_path = text.startswith(("/", "~"))
        if is_path and any(c.isspace() for c in text):
            text = f'"{text}"'
        return text + trailing

    return TEMPLATE_PATH.sub(fill, instruction)


def plan_batch(instruction: str, files: list[Path], out_dir: Path) -> list[BatchItem]:
    """One item per file; raises StateActError when two files would share a name or an output."""
    if not instruction.strip():
        raise StateActError("the instruction is empty; say what to do with each file.")
    items, outputs, names = [], {}, {}
    for source in files:
        if source.name in names:
            raise StateActError(
                f"{source} and {names[source.name]} have the same name; each file "
                "needs its own name."
            )
        names[source.name] = source
        sandbox_path = f"{SANDBOX_HOME}/{source.name}"
        filled = fill_instruction(instruction, sandbox_path)
        others = [path for path in named_paths(filled) if path != sandbox_path]
        output_sandbox = others[0] if others else sandbox_path
        output_name = PurePosixPath(output_sandbox).name
        if output_name in ("", ".", ".."):
            raise StateActError(f"the output {output_sandbox} does not name a file.")
        if output_name in (SUMMARY_NAME, RUNS_DIR, IDENTITY_NAME, LOCK_NAME):
            raise StateActError(
                f"the output name {output_name} is reserved for the batch's own files."
            )
        if output_name in outputs:
            raise StateActError(
                f"{source.name} and {outputs[output_name]} would both write {output_name}; "
                "name the output with {stem} in the instruction (for example "
                "/home/user/{stem}-out.xlsx)."
            )
        outputs[output_name] = source.name
        items.append(
            BatchItem(
                source,
                sandbox_path,
                filled,
                output_sandbox,
                out_dir / output_name,
                out_dir / RUNS_DIR / source.name,
            )
        )
    return items


def checker(task_path: str | Path | None) -> Task | None:
    """The task whose evaluator `--check` applies to every output."""
    if task_path is None:
        return None
    task = load_task(task_path)
    if not task.evaluator.func:
        raise StateActError(f"the check task {task_path} has no evaluator function.")
    return task


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs, beyond its instruction, files, output folder and config."""

    parallel: int = 1
    """Files run at once (each in its own sandbox)."""
    resume: bool = False
    """Keep the runs OUT already holds: finished files are read back, started ones continue."""
    check: str | Path | None = None
    """A task file whose evaluator scores every output."""
    model_factory: ModelFactory | None = None
    """Builds each file's model (None: from the config's spec)."""
    gate_model_factory: ModelFactory | None = None
    """Builds each file's gate model (None: from the config)."""
    on_result: Callable[[dict], None] | None = None
    """Called with each file's row as it is done."""
    ray: RayOptions | None = None
    """Run each file as a Ray task on a cluster's node (see `harness.apps.ray.batch`)."""
    force: bool = False
    """Resume OUT even when its model, preset or control mode differ from this batch's."""
    warm: int = 0
    """Sandboxes kept started ahead of the files (`--warm`, sandboxes/pool.py); local runner."""


def run_batch(
    instruction: str,
    files: list[str | Path],
    out_dir: str | Path,
    config: RunConfig,
    options: BatchOptions | None = None,
) -> list[dict]:
    """Run `instruction` on every file; writes OUT (outputs, runs/, summary.csv) and returns its
    rows. OUT is locked while the batch writes it, and a resumed batch must keep its model, preset
    and control mode (OUT/run.json) unless `options.force` (`harness.apps.outdir`)."""
    options = options or BatchOptions()
    parallel, resume = options.parallel, options.resume
    if parallel < 1:
        raise StateActError("--parallel must be at least 1.")
    check_parallel_network(config.sandbox, parallel)
    pool_config(options.warm, config.sandbox, options.ray)  # a bad --warm fails before any run
    out_dir = Path(out_dir)
    items = plan_batch(instruction, expand_inputs(files), out_dir)
    check_task = checker(options.check)
    if check_task is not None:
        check_task.allow_host_paths = config.allow_host_paths
        check_references(check_task, Path(config.cache_dir) if config.cache_dir else None)
    with OutLock(out_dir, "a batch"):
        if not resume:
            started = [i.run_dir for i in items if i.run_dir.exists() and any(i.run_dir.iterdir())]
            if started:
                raise StateActError(
                    f"{out_dir} already holds runs (for example {started[0]}); pass "
                    "--resume to keep them or choose another --out."
                )
        sources = [str(item.source) for item in items]
        identity = run_identity(config.model, config.preset, config.control, sources)
        check_identity(out_dir, identity, resume, options.force)
        return _run_items(items, out_dir, config, check_task, options)


def _run_items(items, out_dir: Path, config, check_task, options: BatchOptions) -> list[dict]:
    """Run the planned items into the locked OUT."""
    parallel, on_result = options.parallel, options.on_result
    table = SummaryTable(
        out_dir / SUMMARY_NAME, [item.name for item in items], check_task is not None
    )

    job = BatchJob(
        config, check_task, options.resume, options.model_factory, options.gate_model_factory
    )

    def one(item: BatchItem, row: dict | None = None) -> dict:
        if row is None:
            row = run_item(item, job)
        table.put(row)
        if on_result:
            on_result(row)
        return row

    if options.ray is not None:  # Ray itself loads only when the cluster starts
        return run_items_on_ray(items, job, replace(options.ray, local_slots=parallel), one)
    with warm_pool(pool_config(options.warm, config.sandbox)):
        if parallel == 1:
            return [one(item) for item in items]
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="batch") as pool:
            return list(pool.map(one, items))


class SummaryTable:
    """summary.csv, rewritten whole after every file so a killed batch still leaves a readable
    table."""

    def __init__(self, path: Path, names: list[str], scored: bool):
        self.path = path
        self.order = names
        self.fields = [f for f in SUMMARY_FIELDS if scored or f != "score"]
        self.rows: dict[str, dict] = {}
        self._lock = threading.Lock()

    def put(self, row: dict) -> None:
        with self._lock:
            self.rows[Path(row["file"]).name] = row
            tmp = self.path.with_name(f".{self.path.name}.tmp")
            with open(tmp, "w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=self.fields, extrasaction="ignore")
                writer.writeheader()
                for name in self.order:
                    if name in self.rows:
                        writer.writerow({k: _cell(v) for k, v in self.rows[name].items()})
            tmp.replace(self.path)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "passed" if value else "failed"
    return redact(str(value))
