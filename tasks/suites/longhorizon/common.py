"""Small helpers the suite's generators share: where a task's files go, and writers for each
format."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import docx
import openpyxl

# Fixed document metadata so regenerated files carry the same properties on every run.
FIXED_TIME = dt.datetime(2024, 1, 1, 9, 0, 0)


@dataclass(frozen=True)
class TaskFiles:
    """The input and gold folders of one task."""

    fixtures: Path
    """Folder of the files setup uploads into the sandbox."""
    expected: Path
    """Folder of the gold files the evaluator compares against."""

    def fixture(self, name: str) -> Path:
        path = self.fixtures / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def gold(self, name: str) -> Path:
        path = self.expected / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


Builder = Callable[[TaskFiles], None]


class BuilderRegistry:
    """The per-task builders of one generator module, run by `build_all`."""

    def __init__(self) -> None:
        self.builders: dict[str, Builder] = {}

    def task(self, task_id: str) -> Callable[[Builder], Builder]:
        def register(fn: Builder) -> Builder:
            self.builders[task_id] = fn
            return fn

        return register

    def build_all(self, fixtures: Path, expected: Path) -> None:
        for task_id, builder in self.builders.items():
            builder(TaskFiles(fixtures / task_id, expected / task_id))


def new_workbook() -> openpyxl.Workbook:
    """An empty workbook with fixed metadata."""
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    wb.properties.creator = "StateAct suite"
    wb.properties.created = FIXED_TIME
    wb.properties.modified = FIXED_TIME
    return wb


def add_sheet(
    wb: openpyxl.Workbook, title: str, rows: Iterable[Iterable]
) -> openpyxl.worksheet.worksheet.Worksheet:
    ws = wb.create_sheet(title)
    for row in rows:
        ws.append(list(row))
    return ws


def write_xlsx(path: Path, sheets: dict[str, list[list]]) -> openpyxl.Workbook:
    """Write a workbook with one sheet per entry (rows include the header) and return it."""
    wb = new_workbook()
    for title, rows in sheets.items():
        add_sheet(wb, title, rows)
    wb.save(path)
    return wb


def write_csv(path: Path, rows: Iterable[Iterable]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_docx(path: Path, paragraphs: Iterable[str | tuple[str, str]]) -> None:
    """Write a docx; a paragraph is its text, or (style name, text) such as ("Heading 1",
    "Intro")."""
    document = docx.Document()
    document.core_properties.created = FIXED_TIME
    document.core_properties.modified = FIXED_TIME
    document.core_properties.author = "StateAct suite"
    for item in paragraphs:
        style, text = item if isinstance(item, tuple) else (None, item)
        document.add_paragraph(text, style=style)
    document.save(path)


def money(value: float) -> float:
    """Round to cents the way the gold files do (half away from zero on the decimal value)."""
    return float(f"{value + (1e-9 if value >= 0 else -1e-9):.2f}")
