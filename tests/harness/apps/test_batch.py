"""`stateact batch`: five generated workbooks, one scripted instruction, real sandboxes, the
gate, --check scoring, summary.csv, and a SIGKILL midway followed by --resume that does not redo
finished files."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import openpyxl
import pytest

from harness.apps.batch import expand_inputs, fill_instruction, plan_batch
from harness.kernel.core import StateActError
from tests.conftest import REPO, require_image

INSTRUCTION = "In {file}, put a formula in B1 that sums A1:A3, and save the file."
# One script serves every file (each sandbox holds just its own workbook); book3 gets a wrong
# formula
# on purpose, so --check must score it 0 while the others score 1.
EDIT = (
    "import glob, openpyxl\n"
    "path = glob.glob('/home/user/*.xlsx')[0]\n"
    "wb = openpyxl.load_workbook(path)\n"
    "wb.active['B1'] = '=SUM(A1:A2)' if 'book3' in path else '=SUM(A1:A3)'\n"
    "wb.save(path)\n"
    "print(path)"
)
READ_BACK = (
    "python3 -c \"import glob, openpyxl; p = glob.glob('/home/user/*.xlsx')[0]; print(p, "
    "openpyxl.load_workbook(p).active['B1'].value)\""
)


def call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


def scripts(folder: Path) -> tuple[str, str]:
    agent = [
        call("python", code=EDIT),
        call("bash", command=READ_BACK),
        call("bash", command="ls -l /home/user"),
        call("finish", summary="B1 sums A1:A3"),
    ]
    gate = [call("bash", command=READ_BACK), call("verdict", passed=True, gaps=[])]
    (folder / "agent.json").write_text(json.dumps(agent))
    (folder / "gate.json").write_text(json.dumps(gate))
    return f"script/{folder / 'agent.json'}", f"script/{folder / 'gate.json'}"


def make_books(folder: Path, count: int = 5) -> list[Path]:
    folder.mkdir()
    paths = []
    for number in range(1, count + 1):
        workbook = openpyxl.Workbook()
        for row, value in enumerate((number, number + 1, number + 2), start=1):
            workbook.active.cell(row=row, column=1, value=value)
        path = folder / f"book{number}.xlsx"
        workbook.save(path)
        paths.append(path)
    return paths


def make_check(folder: Path) -> Path:
    rule = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "B1",
        "props": {"formula": {"method": "eq", "ref": "=SUM(A1:A3)"}},
    }
    task = {
        "id": "b1-sum-check",
        "instruction": "(checker only)",
        "evaluator": {
            "func": "compare_table",
            "result": {
                "type": "vm_file",
                "path": "/home/user/placeholder.xlsx",
                "dest": "out.xlsx",
            },
            "options": {"rules": [rule]},
        },
    }
    path = folder / "check.json"
    path.write_text(json.dumps(task))
    return path


def batch_argv(books: Path, out: Path, agent: str, gate: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "batch",
        "--instruction",
        INSTRUCTION,
        str(books / "*.xlsx"),
        "--model",
        agent,
        "--gate-model",
        gate,
        "--image",
        "base",
        "--out",
        str(out),
        *extra,
    ]


def read_summary(out: Path) -> dict[str, dict]:
    with open(out / "summary.csv", newline="") as handle:
        return {Path(row["file"]).name: row for row in csv.DictReader(handle)}


def formula(path: Path) -> str:
    return openpyxl.load_workbook(path).active["B1"].value


@pytest.mark.docker
@pytest.mark.slow
def test_batch_over_five_workbooks_with_check(tmp_path):
    require_image("base")
    make_books(tmp_path / "books")
    agent, gate = scripts(tmp_path)
    out = tmp_path / "out"
    argv = batch_argv(
        tmp_path / "books",
        out,
        agent,
        gate,
        "--parallel",
        "2",
        "--check",
        str(make_check(tmp_path)),
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "5/5 files passed the gate" in done.stdout
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 5 and all("ETA" in line for line in progress)
    assert progress[-1].startswith("[5/5]") and "5 succeeded · $0.0000 · ETA 0m00s" in progress[-1]
    rows = read_summary(out)
    assert sorted(rows) == [f"book{n}.xlsx" for n in range(1, 6)]
    for name, row in rows.items():
        assert row["status"] == "completed" and row["gate_passed"] == "passed"
        assert row["output"] == str(out / name) and float(row["cost_usd"]) == 0.0
        assert row["score"] == ("0.0" if name == "book3.xlsx" else "1.0")
        assert formula(out / name) == ("=SUM(A1:A2)" if name == "book3.xlsx" else "=SUM(A1:A3)")
        assert (out / "runs" / name / "result.json").exists()
        assert (out / "runs" / name / "gate" / "round-1.json").exists()
    assert formula(tmp_path / "books" / "book1.xlsx") is None  # inputs are never modified


@pytest.mark.docker
@pytest.mark.slow
def test_batch_killed_midway_resumes_without_redoing_finished_files(tmp_path):
    require_image("base")
    make_books(tmp_path / "books")
    agent, gate = scripts(tmp_path)
    out = tmp_path / "out"
    argv = batch_argv(tmp_path / "books", out, agent, gate)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    deadline = time.monotonic() + 300
    while (
        not list(out.glob("runs/*/result.json"))
        and time.monotonic() < deadline
        and process.poll() is None
    ):
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("runs/*/result.json")}
    assert 1 <= len(finished) < 5
    outputs = {name: (out / name).stat().st_mtime_ns for name in finished}
    done = subprocess.run(
        [*argv, "--resume"], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    for name, mtime in finished.items():  # finished files were neither rerun nor recopied
        assert (out / "runs" / name / "result.json").stat().st_mtime_ns == mtime
        assert (out / name).stat().st_mtime_ns == outputs[name]
    rows = read_summary(out)
    assert len(rows) == 5 and all(row["gate_passed"] == "passed" for row in rows.values())
    assert all(formula(out / f"book{n}.xlsx") for n in range(1, 6))
    # Without --resume an existing batch folder is refused rather than silently overwritten.
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert again.returncode == 2 and "pass --resume" in again.stderr


def test_a_glob_that_matches_nothing_is_one_clear_error(tmp_path):
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "batch",
        "--instruction",
        "x {file}",
        str(tmp_path / "*.xlsx"),
        "--model",
        "script/none.json",
        "--out",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == f"stateact: error: the pattern '{tmp_path / '*.xlsx'}' matches no files."
    )


def test_inputs_and_plan(tmp_path):
    books = make_books(tmp_path / "books", 2)
    assert expand_inputs([str(books[0]), str(tmp_path / "books" / "*.xlsx")]) == books  # no repeats
    with pytest.raises(StateActError, match="does not exist"):
        expand_inputs([str(tmp_path / "missing.xlsx")])
    assert (
        fill_instruction("Tidy {file} ({stem})", "/home/user/a.xlsx")
        == "Tidy /home/user/a.xlsx (a)"
    )
    assert fill_instruction("Tidy it.", "/home/user/a.xlsx").endswith(
        "The file is /home/user/a.xlsx."
    )
    items = plan_batch(
        "Summarize {file} into /home/user/{stem}-summary.docx.", books, tmp_path / "out"
    )
    assert [item.output_sandbox for item in items] == [
        "/home/user/book1-summary.docx",
        "/home/user/book2-summary.docx",
    ]
    assert items[0].output_host == tmp_path / "out" / "book1-summary.docx"
    with pytest.raises(StateActError, match="would both write report.docx"):
        plan_batch("Summarize {file} into /home/user/report.docx.", books, tmp_path / "out")
