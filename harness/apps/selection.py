"""Which tasks a suite runs, and how often: `--filter`, `--shuffle`, `--slice`, `--trials`.

The order is fixed so a command line means one thing: the tasks are discovered in path order,
filtered by a regular expression on their id (or file name), shuffled with a seed, then sliced;
each selected task then runs `trials` times. The summary of a run with trials reports pass@1 (the
mean over tasks of the share of trials that succeeded) with its standard error over tasks, and
pass@k by the unbiased estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021), as Inspect does.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.kernel.core import StateActError


@dataclass(frozen=True)
class Selection:
    """How to pick tasks from the discovered list; the defaults pick every task once."""

    filter: str | None = None
    """A regular expression searched in each task's id (re.search); None keeps every task."""
    slice: str | None = None
    """`A:B` as Python slices it (0-based, B excluded; either side may be empty)."""
    shuffle: int | None = None
    """A seed: shuffle the tasks (after filtering, before slicing) with random.Random(seed)."""
    trials: int = 1
    """Independent runs of each selected task."""

    def __post_init__(self):
        if self.trials < 1:
            raise StateActError("--trials must be at least 1.")
        if self.filter is not None:
            try:
                re.compile(self.filter)
            except re.error as exc:
                raise StateActError(
                    f"--filter {self.filter!r} is not a regular expression: {exc}."
                ) from None
        if self.slice is not None:
            parse_slice(self.slice)

    def apply(self, items: list, name: Callable[[object], str]) -> list:
        """The selected items (one each; trials are the caller's), `name(item)` giving its id."""
        chosen = list(items)
        if self.filter is not None:
            pattern = re.compile(self.filter)
            chosen = [item for item in chosen if pattern.search(name(item))]
        if self.shuffle is not None:
            random.Random(self.shuffle).shuffle(chosen)
        if self.slice is not None:
            chosen = chosen[parse_slice(self.slice)]
        return chosen


def parse_slice(text: str) -> slice:
    """`A:B` → slice(A, B); either bound may be empty or negative."""
    start, sep, stop = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        return slice(int(start) if start.strip() else None, int(stop) if stop.strip() else None)
    except ValueError:
        raise StateActError(
            f"--slice takes A:B (for example 0:10, :5 or 10:), not {text!r}."
        ) from None


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased pass@k of a task with `c` successes in `n` trials; None when n < k."""
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def trial_stats(results: list[dict]) -> dict | None:
    """pass@1 (with its standard error over tasks), pass@k for k = 1..K, and each trial's success
    rate; None when no result carries a trial number above 1."""
    if not any(int(r.get("trial") or 1) > 1 for r in results):
        return None
    per_task: dict[str, list[bool]] = {}
    per_trial: dict[int, list[bool]] = {}
    for r in results:
        ok = bool(r.get("success"))
        per_task.setdefault(str(r.get("task_id")), []).append(ok)
        per_trial.setdefault(int(r.get("trial") or 1), []).append(ok)
    shares = [sum(v) / len(v) for v in per_task.values()]
    mean = sum(shares) / len(shares)
    spread = (
        math.sqrt(sum((s - mean) ** 2 for s in shares) / (len(shares) - 1) / len(shares))
        if len(shares) > 1
        else 0.0
    )
    trials = max(len(v) for v in per_task.values())
    at_k = {}
    for k in range(1, trials + 1):
        values = [pass_at_k(len(v), sum(v), k) for v in per_task.values()]
        known = [v for v in values if v is not None]
        at_k[str(k)] = round(sum(known) / len(known), 6) if known else None
    return {
        "trials": trials,
        "tasks": len(per_task),
        "pass_at_1": round(mean, 6),
        "pass_at_1_stderr": round(spread, 6),
        "pass_at_k": at_k,
        "trial_success_rates": {
            str(t): round(sum(v) / len(v), 6) for t, v in sorted(per_trial.items())
        },
    }


@dataclass(frozen=True)
class SuiteOptions:
    """How a suite run picks its tasks and treats an OUT it continues."""

    selection: Selection = Selection()
    """Which tasks, and how many trials of each."""
    retry_errors: bool = False
    """With resume: run again the tasks whose last run ended in an error."""
    force: bool = False
    """With resume: continue even though OUT/run.json names another model, preset, control mode
    or task set."""
    warm: int = 0
    """Sandboxes the local runner keeps started ahead of its tasks (`--warm`, sandboxes/pool.py)."""
