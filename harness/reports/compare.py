"""Two suite runs side by side: task by task, regressions and improvements first, the totals with
their difference and a paired bootstrap confidence interval of the success-rate difference."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from harness.kernel.core import StateActError

from .page import number, score_of

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260
CONFIDENCE = 0.95
SCORE_TOLERANCE = 1e-9


def load_suite_results(suite_dir: Path) -> list[dict]:
    """The results.jsonl lines of a suite directory, the last line of each task winning."""
    suite_dir = Path(suite_dir)
    path = suite_dir / "results.jsonl"
    if not suite_dir.is_dir():
        raise StateActError(f"{suite_dir} is not a directory.")
    if not path.is_file():
        return [_single_run(suite_dir)]
    by_task: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if isinstance(record, dict) and "task_id" in record:
            by_task[str(record["task_id"])] = record
    return list(by_task.values())


def _single_run(run_dir: Path) -> dict:
    """A run directory compares as a suite of one task."""
    path = run_dir / "result.json"
    if not path.is_file():
        raise StateActError(
            f"{run_dir} is neither a suite directory (results.jsonl) nor a finished run "
            "(result.json)."
        )
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateActError(f"{path} is not valid JSON: {exc}.") from None
    if not isinstance(result, dict):
        raise StateActError(f"{path} does not hold a result object.")
    return {**result, "run_dir": "."}


@dataclass
class Pair:
    """One task in both runs (either side None when the task ran in one run only)."""

    task_id: str
    a: dict | None
    b: dict | None

    @property
    def change(self) -> str:
        """`regression`, `improvement`, `same`, `only A` or `only B`, by score."""
        if self.a is None:
            return "only B"
        if self.b is None:
            return "only A"
        delta = score_of(self.b) - score_of(self.a)
        if delta < -SCORE_TOLERANCE:
            return "regression"
        if delta > SCORE_TOLERANCE:
            return "improvement"
        return "same"

    @property
    def score_delta(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return score_of(self.b) - score_of(self.a)


ORDER = {"regression": 0, "improvement": 1, "only A": 2, "only B": 3, "same": 4}


def side_totals(results: list[dict]) -> dict:
    count = len(results)
    return {
        "tasks": count,
        "successes": sum(1 for r in results if r.get("success")),
        "success_rate": sum(1 for r in results if r.get("success")) / count if count else None,
        "mean_score": sum(score_of(r) for r in results) / count if count else None,
        "cost_usd": sum(number(r.get("cost_usd")) for r in results),
        "model_turns": sum(int(number(r.get("model_turns"))) for r in results),
    }


def bootstrap_interval(
    a: list[bool],
    b: list[bool],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile interval of mean(b) − mean(a), resampling the tasks (pairs) with replacement.

    Seeded, so the same two runs always give the same interval. None without paired tasks.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return None
    diffs = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[int((1.0 - tail) * (resamples - 1) + 0.5)]
    return (low, high)


@dataclass
class Comparison:
    """The pairs in display order and the totals of both sides."""

    name_a: str
    name_b: str
    pairs: list[Pair]
    totals_a: dict = field(default_factory=dict)
    totals_b: dict = field(default_factory=dict)
    paired: int = 0
    success_difference: float | None = None
    interval: tuple[float, float] | None = None

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(ORDER, 0)
        for pair in self.pairs:
            counts[pair.change] += 1
        return counts

    def to_json(self) -> dict:
        return {
            "a": self.name_a,
            "b": self.name_b,
            "totals_a": self.totals_a,
            "totals_b": self.totals_b,
            "paired_tasks": self.paired,
            "success_rate_difference": self.success_difference,
            "interval": list(self.interval) if self.interval else None,
            "confidence": CONFIDENCE,
            "changes": self.counts(),
            "tasks": [
                {
                    "task_id": p.task_id,
                    "change": p.change,
                    "score_a": p.a.get("score") if p.a else None,
                    "score_b": p.b.get("score") if p.b else None,
                }
                for p in self.pairs
            ],
        }


def compare(results_a: list[dict], results_b: list[dict], name_a="A", name_b="B") -> Comparison:
    """Pair the runs' tasks by id; regressions first (largest drop first), then improvements."""
    a = {str(r.get("task_id")): r for r in results_a}
    b = {str(r.get("task_id")): r for r in results_b}
    ids = list(dict.fromkeys([*a, *b]))
    pairs = [Pair(task_id, a.get(task_id), b.get(task_id)) for task_id in ids]
    pairs.sort(key=lambda p: (ORDER[p.change], -abs(p.score_delta or 0.0), p.task_id))
    both = [p for p in pairs if p.a is not None and p.b is not None]
    success_a = [bool(p.a.get("success")) for p in both]
    success_b = [bool(p.b.get("success")) for p in both]
    difference = (sum(success_b) - sum(success_a)) / len(both) if both else None
    return Comparison(
        name_a,
        name_b,
        pairs,
        side_totals(results_a),
        side_totals(results_b),
        len(both),
        difference,
        bootstrap_interval(success_a, success_b),
    )


def compare_dirs(dir_a: Path, dir_b: Path) -> Comparison:
    return compare(load_suite_results(dir_a), load_suite_results(dir_b), str(dir_a), str(dir_b))
