"""Helpers for the spreadsheet case generators: a case list and small workbook builders.

The generators write input files only. Each case's `score` is filled in by running OSWorld's own
metric function on the same files (outside this project); see docs/osworld-fidelity.md.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.workbook import Workbook

HERE = Path(__file__).resolve().parent
Rows = list[list[Any]]
Tweak = Callable[[Workbook], None]


class CaseSet:
    """The cases of one family, written to `<family>/<id>/` and `<family>/cases.json`."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.root = HERE / family
        self.cases: list[dict] = []

    def folder(self, case_id: str) -> Path:
        path = self.root / case_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def add(self, case_id: str, metric: str, result: Any, expected: Any, options: dict) -> None:
        if any(c["id"] == case_id for c in self.cases):
            raise ValueError(f"case id {case_id} is used twice")
        self.folder(case_id)
        self.cases.append(
            {
                "id": case_id,
                "metric": metric,
                "result": result,
                "expected": expected,
                "options": options,
                "score": None,
            }
        )

    def write(self) -> None:
        """Write cases.json, keeping the verdicts already recorded for unchanged cases."""
        index = self.root / "cases.json"
        old = {}
        if index.is_file():
            old = {c["id"]: c for c in json.loads(index.read_text())}
        for case in self.cases:
            before = old.get(case["id"])
            if before and all(before[k] == case[k] for k in ("metric", "expected", "options")):
                case["score"] = before["score"]
                if "osworld_raises" in before:
                    case["osworld_raises"] = before["osworld_raises"]
        index.write_text(json.dumps(self.cases, indent=1) + "\n")

    def reset(self) -> None:
        if self.root.is_dir():
            for child in self.root.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)


def book(path: Path, sheets: dict[str, Rows] | Rows, tweak: Tweak | None = None) -> None:
    """Write an xlsx with the given rows per sheet (a bare list of rows is one sheet 'Sheet1')."""
    sheets = {"Sheet1": sheets} if isinstance(sheets, list) else sheets
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    if tweak is not None:
        tweak(wb)
    wb.save(path)
    rewrite_zip(path, lambda name, data: data)


FIXED_TIME = (2024, 1, 1, 0, 0, 0)
STAMP = re.compile(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)")


def rewrite_zip(path: Path, edit: Callable[[str, bytes], bytes]) -> None:
    """Rewrite each member of an xlsx through `edit(name, data)` (for XML openpyxl cannot write).

    Timestamps (zip entries, document properties) are fixed so that regenerating gives the same
    bytes.
    """
    with zipfile.ZipFile(path) as src:
        members = [(info.filename, src.read(info.filename)) for info in src.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in members:
            data = edit(name, data)
            if name == "docProps/core.xml":
                data = STAMP.sub(rb"\g<1>2024-01-01T00:00:00Z\g<2>", data)
            dst.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, zipfile.ZIP_DEFLATED)


def text(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
