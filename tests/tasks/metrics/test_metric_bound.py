"""Every metric's comparison runs under the metric bound (tasks/evaluate.py: a forked child with
an address-space cap and a deadline): a workbook whose sheet XML would make openpyxl grow without
limit scores 0 with one sentence, and the harness's own memory does not grow; the honest twin
scores 1 through the same path."""

from __future__ import annotations

import time
import zipfile

import openpyxl
import pytest

from tasks import evaluate
from tasks.evaluate import apply_metric

RULES = {"rules": [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]}
# 1.2M cells, a few MiB zipped (well inside the zip caps), that openpyxl grows far past the bound.
BOMB_ROWS = 200_000


def workbook(path, rows=((1, 2), (3, 4))) -> str:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(list(row))
    book.save(path)
    return str(path)


def sheet_bomb(path) -> str:
    """A valid xlsx whose one sheet is millions of cells (a few MiB on disk)."""
    honest = workbook(path.with_name("honest-base.xlsx"))
    row = '<row r="{0}">' + "".join(f'<c r="{c}{{0}}"><v>7</v></c>' for c in "ABCDEF") + "</row>"
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        + "".join(row.format(r) for r in range(1, BOMB_ROWS + 1))
        + "</sheetData></worksheet>"
    )
    with zipfile.ZipFile(honest) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = sheet if item.filename == "xl/worksheets/sheet1.xml" else source.read(item)
            out.writestr(item.filename, data)
    return str(path)


def resident_bytes() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def score(result: str, expected: str):
    return apply_metric("compare_table", lambda: result, lambda: expected, RULES)


def test_a_sheet_bomb_scores_zero_within_the_memory_bound(tmp_path, monkeypatch):
    # A 96 MiB bound keeps the test fast; the mechanism is the one the 1 GiB default uses.
    monkeypatch.setattr(evaluate, "METRIC_MEMORY_BYTES", 96 * 1024 * 1024)
    bomb, gold = sheet_bomb(tmp_path / "bomb.xlsx"), workbook(tmp_path / "gold.xlsx")
    before = resident_bytes()
    started = time.monotonic()
    outcome = score(bomb, gold)
    assert time.monotonic() - started < 60
    assert outcome.value == 0.0 and not outcome.evaluation_failed
    assert "MiB of memory" in outcome.error and "\n" not in outcome.error, outcome.error
    assert resident_bytes() - before < 64 * 1024 * 1024


def test_a_sheet_bomb_scores_zero_at_the_deadline(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "METRIC_TIMEOUT_S", 1.0)
    bomb, gold = sheet_bomb(tmp_path / "bomb.xlsx"), workbook(tmp_path / "gold.xlsx")
    started = time.monotonic()
    outcome = score(bomb, gold)
    assert time.monotonic() - started < 10
    assert outcome.value == 0.0 and not outcome.evaluation_failed
    assert outcome.error == "reading the file took longer than 1 s; stopped."


def test_the_honest_twin_scores_one_through_the_bound(tmp_path):
    same, gold = workbook(tmp_path / "same.xlsx"), workbook(tmp_path / "gold.xlsx")
    assert score(same, gold).value == 1.0
    other = workbook(tmp_path / "other.xlsx", rows=((1, 2), (3, 5)))
    assert score(other, gold).value == 0.0 and score(other, gold).error is None


def test_a_metric_error_keeps_its_kind_across_the_bound(tmp_path):
    gold = workbook(tmp_path / "gold.xlsx")
    outcome = score(str(tmp_path / "absent.xlsx"), gold)
    assert outcome.error == "the result spreadsheet does not exist"
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip")
    outcome = score(str(broken), gold)
    assert outcome.value == 0.0 and "cannot be read" in outcome.error


@pytest.mark.parametrize("name", sorted(evaluate.IN_PROCESS_METRICS))
def test_in_process_metrics_exist(name):
    assert name in evaluate.METRICS
