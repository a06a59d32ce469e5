"""Suite throughput with the oracle at --parallel 1, 2 and 4 on a slice of bundled tasks, beside
the plainest way to do the same work: each task's setup, reference script and checker in a fresh
sandbox, one task after another, with no agent loop, gate, records or reports."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from harness.apps.suite import ensure_suite_fixtures, run_suite
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from sandboxes import open_sandbox
from tasks.schema import load_task

from . import Row, row

SUITE = Path(__file__).resolve().parents[1] / "tasks" / "suites" / "longhorizon"
SLICE = ("lh-calc-001", "lh-writer-001", "lh-os-001", "lh-db-001", "lh-x-001", "lh-impress-001")
PARALLEL = (1, 2, 4)


def slice_paths() -> list[Path]:
    return [SUITE / "tasks" / f"{task_id}.json" for task_id in SLICE]


def plain_run(path: Path, config: RunConfig) -> float:
    """Setup, the reference script and the checker in a fresh sandbox; returns the score."""
    from tasks.evaluate import evaluate
    from tasks.getters import SandboxSource
    from tasks.setup import run_setup

    task = load_task(path)
    script = SUITE / "solutions" / f"{task.id}.sh"
    with open_sandbox(config.sandbox) as sandbox, tempfile.TemporaryDirectory() as work:
        run_setup(task.config, sandbox, task, None)
        sandbox.copy_in(script, "/tmp/solution.sh")
        code, output = sandbox.exec(["bash", "/tmp/solution.sh"], timeout=300)
        if code != 0:
            raise RuntimeError(f"{task.id}: the solution failed: {output[-300:]}")
        run_setup(task.evaluator.postconfig, sandbox, task, None)
        return evaluate(task, SandboxSource(sandbox), work_dir=Path(work)).score


def plain_run_with_retry(path: Path, config: RunConfig) -> float:
    """The suite retries a sandbox or setup failure once in a fresh sandbox; so does the
    baseline."""
    try:
        return plain_run(path, config)
    except StateActError:
        return plain_run(path, config)


def timed_plain(config: RunConfig) -> tuple[float, float]:
    started = time.perf_counter()
    scores = [plain_run_with_retry(path, config) for path in slice_paths()]
    return time.perf_counter() - started, sum(scores) / len(scores)


def timed_suite(config: RunConfig, parallel: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="stateact-suite-bench-") as out:
        started = time.perf_counter()
        summary = run_suite(slice_paths(), config, out, parallel=parallel)
        return time.perf_counter() - started, summary["mean_score"] or 0.0


def rows() -> list[Row]:
    ensure_suite_fixtures(slice_paths())
    config = RunConfig(model="script/oracle")
    count = len(SLICE)
    plain_s, plain_score = timed_plain(config)
    plain_per_task = plain_s / count
    result = []
    for parallel in PARALLEL:
        total, score = timed_suite(config, parallel)
        per_task = total / count
        note = (
            f"{60 / per_task:.1f} tasks/min vs {60 / plain_per_task:.1f}; mean score "
            f"{score:.2f} (plain {plain_score:.2f})"
        )
        if parallel == 1:
            note += f"; harness overhead {per_task - plain_per_task:+.1f} s/task"
        result.append(
            row(
                f"suite wall time per task, oracle, {count} bundled tasks, --parallel {parallel}",
                per_task,
                count,
                "setup + solution script + checker per task, fresh sandbox, sequential",
                plain_per_task,
                note,
            )
        )
    return result
