"""Batch office-file jobs: one instruction over many files, each in its own sandbox and through
the gate.

OUT/<output name>        each file's result, copied out of its sandbox
OUT/runs/<file name>/    each file's run directory (result.json marks it finished)
OUT/summary.csv          one row per file: status, gate verdict, cost, output path, score
"""

from __future__ import annotations

import copy
import csv
import glob
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gates.structural import named_paths
from harness.kernel.core import Model, StateActError
from harness.kernel.records import write_json_atomic
from harness.kernel.secrets import redact
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes.base import SANDBOX_HOME, check_parallel_network
from tasks.schema import Evaluator, SetupStep, Task, load_task
from tasks.support import check_references

from .outdir import IDENTITY_NAME, LOCK_NAME, OutLock, check_identity, run_identity
from .ray_cluster import RayOptions

SUMMARY_NAME = "summary.csv"
RUNS_DIR = "runs"
SUMMARY_FIELDS = ("file", "status", "gate_passed", "cost_usd", "output", "score", "error")
GLOB_CHARS = set("*?[")
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


def run_batch(
    instruction: str,
    files: list[str | Path],
    out_dir: str | Path,
    config: RunConfig,
    *,
    parallel: int = 1,
    resume: bool = False,
    check: str | Path | None = None,
    model_factory: ModelFactory | None = None,
    gate_model_factory: ModelFactory | None = None,
    on_result: Callable[[dict], None] | None = None,
    ray: RayOptions | None = None,
    force: bool = False,
) -> list[dict]:
    """Run `instruction` on every file; writes OUT (outputs, runs/, summary.csv) and returns its
    rows. OUT is locked while the batch writes it, and a resumed batch must keep its model, preset
    and control mode (OUT/run.json) unless `force` (`harness.apps.outdir`).

    With `ray`, each file runs as a Ray task on a cluster's node (see `harness.apps.ray_batch`).
    """
    if parallel < 1:
        raise StateActError("--parallel must be at least 1.")
    check_parallel_network(config.sandbox, parallel)
    out_dir = Path(out_dir)
    items = plan_batch(instruction, expand_inputs(files), out_dir)
    check_task = checker(check)
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
        check_identity(out_dir, identity, resume, force)
        return _run_items(
            items,
            out_dir,
            config,
            check_task,
            resume,
            (model_factory, gate_model_factory, on_result, ray, parallel),
        )


def _run_items(items, out_dir: Path, config, check_task, resume: bool, how: tuple) -> list[dict]:
    """Run the planned items into the locked OUT; `how` is (model_factory, gate_model_factory,
    on_result, ray, parallel)."""
    model_factory, gate_model_factory, on_result, ray, parallel = how
    table = SummaryTable(
        out_dir / SUMMARY_NAME, [item.name for item in items], check_task is not None
    )

    def one(item: BatchItem, row: dict | None = None) -> dict:
        if row is None:
            row = run_item(item, config, check_task, resume, model_factory, gate_model_factory)
        table.put(row)
        if on_result:
            on_result(row)
        return row

    if ray is not None:
        from .ray_batch import run_items_on_ray  # same layer; Ray itself loads only there

        factories = (model_factory, gate_model_factory)
        return run_items_on_ray(items, config, check_task, resume, factories, ray, one, parallel)
    if parallel == 1:
        return [one(item) for item in items]
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="batch") as pool:
        return list(pool.map(one, items))


def run_item(item, config, check_task, resume, model_factory, gate_model_factory) -> dict:
    """Run (or, on resume, read back) one file's task and return its summary row."""
    task = item_task(item, check_task)

    def copy_back(sandbox) -> None:
        try:
            sandbox.copy_out(item.output_sandbox, item.output_host)
        except FileNotFoundError:
            raise StateActError(
                f"the run left no file at {item.output_sandbox} to copy out."
            ) from None

    model = model_factory() if model_factory else None
    gate_model = gate_model_factory() if gate_model_factory else None
    # A finished file (result.json) is read back as is; a started one continues from its trajectory.
    resume = resume and (item.run_dir / "trajectory.jsonl").exists()
    result = run_task(
        task,
        config,
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
