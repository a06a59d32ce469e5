"""Which metrics and getters a set of task files uses, and whether StateAct implements each.

`stateact suite PATH… --dry-run --summary` prints this table, so coverage of a benchmark can be read at a
glance; it is generated from the task files, never kept by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import tasks.metrics  # noqa: F401  (registers every metric)
from harness.kernel.core import StateActError
from tasks.getters import GETTERS
from tasks.metrics.registry import METRICS
from tasks.schema import load_task


@dataclass(frozen=True)
class CoverageRow:
    """One metric or getter the tasks use."""

    kind: str
    """"metric" or "getter"."""
    name: str
    """Its OSWorld name."""
    implemented: bool
    """Whether StateAct has it."""
    tasks: int
    """How many of the tasks use it."""


@dataclass
class Coverage:
    """The table, and how many tasks StateAct can score with what it implements."""

    rows: list[CoverageRow] = field(default_factory=list)
    tasks: int = 0
    """Task files read."""
    covered: int = 0
    """Tasks whose every metric and getter is implemented."""
    unreadable: int = 0
    """Task files that could not be loaded (not counted in the rows)."""


def getter_types(spec) -> Iterable[str]:
    """The getter types a result/expected entry names (an entry may be a list of specs)."""
    for item in spec if isinstance(spec, list) else [spec]:
        if isinstance(item, dict) and isinstance(item.get("type"), str):
            yield item["type"]


def task_needs(path: Path) -> set[tuple[str, str]]:
    """(kind, name) of every metric and getter of one task file."""
    evaluator = load_task(path).evaluator
    needs = {("metric", name) for name in evaluator.funcs}
    for part in ("result", "expected"):
        for spec in evaluator.aligned(part):
            needs |= {("getter", kind) for kind in getter_types(spec)}
    return needs


def is_implemented(kind: str, name: str) -> bool:
    return name in (METRICS if kind == "metric" else GETTERS)


def evaluator_coverage(task_paths: Iterable[Path]) -> Coverage:
    """Count, over the task files, the tasks using each metric and getter."""
    coverage = Coverage()
    users: dict[tuple[str, str], int] = {}
    for path in task_paths:
        coverage.tasks += 1
        try:
            needs = task_needs(path)
        except (StateActError, OSError, ValueError):
            coverage.unreadable += 1
            continue
        for need in needs:
            users[need] = users.get(need, 0) + 1
        coverage.covered += all(is_implemented(*need) for need in needs)
    coverage.rows = sorted(
        (
            CoverageRow(kind, name, is_implemented(kind, name), n)
            for (kind, name), n in users.items()
        ),
        key=lambda row: (row.kind != "metric", -row.tasks, row.name),
    )
    return coverage


def coverage_table(coverage: Coverage) -> str:
    """The rows as aligned text: kind, name, implemented or missing, number of tasks."""
    width = max([len(row.name) for row in coverage.rows] + [4])
    lines = [f"{'kind':<6}  {'name':<{width}}  {'status':<11}  tasks"]
    for row in coverage.rows:
        status = "implemented" if row.implemented else "MISSING"
        lines.append(f"{row.kind:<6}  {row.name:<{width}}  {status:<11}  {row.tasks:>5}")
    return "\n".join(lines)
