"""Which metrics and getters a set of task files uses, and whether StateAct implements each.

`stateact suite PATH… --dry-run --summary` prints this table, so coverage of a benchmark can be
read at a glance; it is generated from the task files, never kept by hand.
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


# Kinds whose details name one file each: the summary counts them by kind only.
FILE_KINDS = {"file not in the cache dir", "file missing", "file outside the task folder"}


@dataclass(frozen=True)
class BlockerRow:
    """One blocker of a dry run and how many tasks it stops."""

    kind: str
    """The reason's kind ("metric not implemented", "needs the internet", …)."""
    detail: str
    """What exactly (a metric's name, an application…); empty for file kinds and free text."""
    tasks: int
    """Tasks it blocks."""
    alone: int
    """Tasks it alone blocks: fixing it makes them runnable."""

    def as_json(self) -> dict:
        return {
            "blocker": self.kind,
            "detail": self.detail,
            "tasks": self.tasks,
            "alone": self.alone,
        }


def blocker_key(reason: str) -> tuple[str, str]:
    kind, _, detail = reason.partition(":")
    detail = detail.strip()
    if kind in FILE_KINDS or kind in ("needs the internet", "broken task file"):
        detail = ""
    return kind, detail


def blocker_summary(records: Iterable[dict]) -> list[BlockerRow]:
    """Rows by blocker over dry-run records, the most blocking first."""
    counts: dict[tuple[str, str], list[int]] = {}
    for record in records:
        keys = list(dict.fromkeys(blocker_key(reason) for reason in record.get("reasons", [])))
        for key in keys:
            count = counts.setdefault(key, [0, 0])
            count[0] += 1
            count[1] += len(keys) == 1
    rows = [BlockerRow(kind, detail, n, alone) for (kind, detail), (n, alone) in counts.items()]
    return sorted(rows, key=lambda row: (-row.tasks, row.kind, row.detail))


def blocker_table(rows: list[BlockerRow], total: int, runnable: int) -> str:
    """The rows as aligned text, under a line with the runnable count."""
    labels = [f"{row.kind}: {row.detail}" if row.detail else row.kind for row in rows]
    width = max([len(label) for label in labels] + [7])
    lines = [
        f"{runnable} of {total} task(s) runnable",
        f"{'blocker':<{width}}  tasks  alone",
    ]
    for label, row in zip(labels, rows, strict=True):
        lines.append(f"{label:<{width}}  {row.tasks:>5}  {row.alone:>5}")
    return "\n".join(lines)
