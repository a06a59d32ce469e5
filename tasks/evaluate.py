"""Score a task's final state with its evaluator, with OSWorld's semantics (see
reference/osworld.md).

`evaluate` never raises: an unknown metric, a failing getter or a broken file makes that metric 0
with the reason in its `error`, and the task is scored from the metric values by the `conj` rule.
Running `postconfig` (saving files in a live machine) is the caller's job; this takes the state
as is.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, Field

import tasks.metrics  # noqa: F401  (registers every metric)
from harness.kernel.core import StateActError, ToolError
from sandboxes import SandboxError
from sandboxes.agent_files import FileLimitError, clip
from tasks.agent_code import agent_sandbox_is
from tasks.eval_failure import EvaluationFailed
from tasks.getters import GetterContext, StateSource, run_getter
from tasks.metrics.registry import METRICS
from tasks.schema import Task
from tasks.webarena.scoring import score_webarena
from tasks.webarena.task import webarena_of

FAIL_ACTION = "FAIL"
FILE_GETTERS = {"vm_file", "cache_file", "local_file"}


class MetricResult(BaseModel):
    """One metric's outcome."""

    name: str
    """The OSWorld metric name."""
    value: float
    """Its value in [0, 1]; 0 when it could not be computed."""
    error: str | None = None
    """Why it could not be computed, if it could not."""
    inputs: dict | None = None
    """What it compared, for the trajectory page: `result` and `expected` (a short preview of each
    fetched value: text, or a file's name and size) and the metric's `options`."""
    evaluation_failed: bool = Field(default=False, exclude=True)
    """The machine could not run the evaluation's command (fork bomb, killed, out of time); not
    in records, where the task's status says it."""


class EvalResult(BaseModel):
    """A task's score and how it came about."""

    score: float
    """The task score in [0, 1]."""
    metrics: list[MetricResult]
    """Each metric of the evaluator, in order."""
    error: str | None = None
    """A task-level problem (the first metric error), if any."""
    failure: str | None = None
    """Why the evaluation itself could not run (the first such metric), if it could not: the
    score is then no verdict on the work."""


def combine(values: list[float], conj: str) -> float:
    """OSWorld's combination: `and` is 0 if any metric is 0 else the mean; `or` 1 if any is 1
    else the max."""
    if len(values) == 1:
        return values[0]
    if conj == "or":
        return 1.0 if any(v >= 1.0 for v in values) else max(values)
    return 0.0 if any(v == 0.0 for v in values) else sum(values) / len(values)


def run_metric(name: str, result_spec, expected_spec, options, ctx: GetterContext) -> MetricResult:
    """One metric on freshly fetched getter values; any failure becomes an error result."""

    def fetch_result():
        # Result and expected files land in separate folders: tasks give both the same `dest`.
        result = run_getter(result_spec, replace(ctx, work_dir=ctx.work_dir / "result"))
        if (
            result is None
            and isinstance(result_spec, dict)
            and result_spec.get("type") in FILE_GETTERS
        ):
            raise StateActError(f"the result file {result_spec.get('path')} does not exist")
        return result

    def fetch_expected():
        return run_getter(expected_spec, replace(ctx, work_dir=ctx.work_dir / "expected"))

    return apply_metric(
        name, fetch_result, None if expected_spec is None else fetch_expected, options
    )


def apply_metric(name: str, fetch_result, fetch_expected, options) -> MetricResult:
    """Metric `name` on the values the fetch callables return (no `fetch_expected`: no expected)."""
    inputs: dict = {"options": options} if options else {}
    try:
        fn = METRICS.get(name)
        if fn is None:
            return MetricResult(name=name, value=0.0, error=f"unknown metric {name!r}")
        result = fetch_result()
        inputs["result"] = value_preview(result)
        kwargs = options if isinstance(options, dict) else {}
        if fetch_expected is not None:
            expected = fetch_expected()
            inputs["expected"] = value_preview(expected)
            value = float(fn(result, expected, **kwargs))
        else:
            value = float(fn(result, **kwargs))
        if not 0.0 <= value <= 1.0:
            return MetricResult(
                name=name,
                value=0.0,
                error=f"metric {name} returned {value}, outside [0, 1]",
                inputs=inputs,
            )
        return MetricResult(name=name, value=value, inputs=inputs)
    except FileLimitError as exc:  # the agent's file is past what the harness reads: a 0, its doing
        return MetricResult(name=name, value=0.0, error=clip(str(exc)), inputs=inputs or None)
    except (EvaluationFailed, SandboxError) as exc:  # no verdict: the machine failed the checker
        return MetricResult(
            name=name,
            value=0.0,
            error=clip(str(exc)),
            inputs=inputs or None,
            evaluation_failed=True,
        )
    except Exception as exc:  # noqa: BLE001 -- a task's scoring must never crash the run
        reason = str(exc) or type(exc).__name__
        if not isinstance(exc, StateActError | ToolError):
            reason = f"{type(exc).__name__}: {reason}"
        # The reason may quote the agent's file (a parser's message): a few KiB reach the record.
        return MetricResult(name=name, value=0.0, error=clip(reason), inputs=inputs or None)


PREVIEW_CHARS = 300


def value_preview(value) -> str:
    """A getter's value in a few words: a fetched file as its name and size, else its text."""
    if isinstance(value, str | Path) and len(str(value)) < 4096:
        path = Path(value)
        try:
            if path.is_absolute() and path.is_file():
                return f"file {path.name} ({path.stat().st_size:,} bytes)"
        except OSError:
            pass
    text = repr(value)  # quotes show where a string ends (a trailing newline, spaces)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def run_metric_value(name: str, result, expected, options) -> float:
    """Metric `name` on values already fetched (`expected` None: the task has none); 0 on any
    error."""
    fetch_expected = None if expected is None else (lambda: expected)
    return apply_metric(name, lambda: result, fetch_expected, options).value


def evaluate(
    task: Task,
    source: StateSource,
    cache_dir: Path | None = None,
    work_dir: Path | None = None,
    final_action: str | None = None,
    answer: str | None = None,
) -> EvalResult:
    """Score `task` against the state `source` exposes; never raises. `answer` is the agent's
    `finish` text, which a WebArena task's `string_match` compares."""
    webarena = webarena_of(task)
    if webarena is not None:
        return webarena_result(webarena, source, answer, final_action == FAIL_ACTION)
    evaluator = task.evaluator
    funcs = evaluator.funcs
    if funcs == ["infeasible"]:
        value = 1.0 if final_action == FAIL_ACTION else 0.0
        return EvalResult(score=value, metrics=[MetricResult(name="infeasible", value=value)])
    if final_action == FAIL_ACTION:
        results = [
            MetricResult(name=n, value=0.0, error="the agent declared the task infeasible")
            for n in funcs
        ]
        return EvalResult(
            score=0.0, metrics=results, error="the agent declared a feasible task infeasible"
        )
    # Agent code a metric runs goes to a throwaway sandbox of the agent's image (agent_code.py).
    agent_config = getattr(getattr(source, "sandbox", None), "config", None)
    with (
        agent_sandbox_is(agent_config),
        tempfile.TemporaryDirectory(prefix="stateact-eval-") as scratch,
    ):
        base = Path(work_dir) if work_dir is not None else Path(scratch)
        results = []
        specs = zip(
            funcs,
            evaluator.aligned("result"),
            evaluator.aligned("expected"),
            evaluator.aligned("options"),
            strict=True,
        )
        for index, (name, result_spec, expected_spec, options) in enumerate(specs):
            # Each metric gets its own folder: two metrics often fetch the same `dest` name.
            fetched = base / "evaluation" / f"metric{index}"
            ctx = GetterContext(task, source, cache_dir, fetched, outputs_dir=work_dir)
            results.append(run_metric(name, result_spec, expected_spec, options, ctx))
    score = combine([m.value for m in results], evaluator.conj)
    first_error = next((f"{m.name}: {m.error}" for m in results if m.error), None)
    failure = next((f"{m.name}: {m.error}" for m in results if m.evaluation_failed), None)
    return EvalResult(score=score, metrics=results, error=first_error, failure=failure)


def webarena_result(task, source, answer: str | None, infeasible: bool) -> EvalResult:
    """A WebArena task's verdict (tasks/webarena/scoring.py) as an EvalResult."""
    verdict = score_webarena(task, getattr(source, "sandbox", None), answer, infeasible)
    error = verdict.failure or verdict.error
    metrics = [
        MetricResult(
            name=name,
            value=value,
            error=error,
            evaluation_failed=bool(verdict.failure),
            inputs=verdict.inputs or None,
        )
        for name, value in verdict.values.items()
        if name != "score"
    ] or [
        MetricResult(
            name="webarena", value=0.0, error=error, evaluation_failed=bool(verdict.failure)
        )
    ]
    score = verdict.values.get("score", 0.0)
    failure = f"webarena: {verdict.failure}" if verdict.failure else None
    return EvalResult(score=score, metrics=metrics, error=error, failure=failure)
