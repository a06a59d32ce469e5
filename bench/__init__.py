"""`make bench`: medians over repeated runs, each beside the plainest way to do the same thing.

Every module here exposes `rows() -> list[Row]`; `python -m bench [NAME...]` runs them, prints a
table and writes bench/results.json (a JSON list of rows: name, median_s, runs, baseline,
baseline_median_s, ratio = baseline / ours).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass


@dataclass
class Row:
    name: str
    median_s: float
    runs: int
    baseline: str
    baseline_median_s: float | None
    ratio: float | None
    note: str = ""

    def as_json(self) -> dict:
        return asdict(self)


def median_time(action: Callable[[], object], runs: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def row(
    name: str, ours: float, runs: int, baseline: str, theirs: float | None, note: str = ""
) -> Row:
    ratio = round(theirs / ours, 3) if theirs and ours else None
    return Row(
        name, round(ours, 6), runs, baseline, round(theirs, 6) if theirs else None, ratio, note
    )
