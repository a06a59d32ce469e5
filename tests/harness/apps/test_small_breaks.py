"""The small breaks a new user hit (issue 27, items 1 and 5), each checked as the user met it."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import openpyxl
import pytest

from gates.structural import named_paths
from harness.apps.batch import plan_batch
from harness.apps.suite import is_bundled
from harness.reports.summary import summarize
from tests.conftest import REPO, require_image, stateact
from tests.harness.apps.test_suite_runner import BUNDLED, file_task, write_task
from tests.report_helpers import fake_results


def test_the_bundled_suite_is_stateacts_own():
    """BUNDLED_SUITES pointed at harness/tasks/suites, which does not exist."""
    assert is_bundled(BUNDLED)
    done = stateact("suite", str(BUNDLED), "--dry-run", "--sandbox", "local")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    per_task = [x for x in lines if "runnable" in x]
    assert len(per_task) >= 40
    assert not any("file missing" in str(x.get("reason")) for x in per_task)
    assert "--build-fixtures" not in done.stderr


def test_a_dry_run_piped_into_head_stops_quietly():
    command = [sys.executable, "-m", "harness.cli", "suite", str(BUNDLED), "--dry-run"]
    command += ["--sandbox", "local"]
    shell = f"{' '.join(command)} | head -n 1"
    done = subprocess.run(
        ["bash", "-c", shell], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert json.loads(done.stdout.splitlines()[0])["id"]
    assert "internal error" not in done.stderr and "BrokenPipeError" not in done.stderr


def test_batch_takes_files_with_spaces_in_their_names(tmp_path):
    """`sales 1.xlsx` and `sales 2.xlsx` were refused as a name clash (both "wrote" ~/sales)."""
    files = []
    for n in (1, 2):
        path = tmp_path / f"sales {n}.xlsx"
        openpyxl.Workbook().save(path)
        files.append(path)
    items = plan_batch("Sort {file} by the Date column and save it", files, tmp_path / "out")
    assert [i.output_sandbox for i in items] == [
        "/home/user/sales 1.xlsx",
        "/home/user/sales 2.xlsx",
    ]
    assert named_paths(items[0].instruction) == ["/home/user/sales 1.xlsx"]  # the gate's reading
    renamed = plan_batch("Save a copy as /home/user/{stem}-sorted.xlsx", files, tmp_path / "out")
    assert [i.output_host.name for i in renamed] == ["sales 1-sorted.xlsx", "sales 2-sorted.xlsx"]


def test_report_of_a_suite_prints_words_unless_json_is_asked(tmp_path):
    results = fake_results(6)
    (tmp_path / "summary.json").write_text(json.dumps(summarize(results)))
    words = stateact("report", str(tmp_path))
    assert words.returncode == 0, words.stderr
    assert "6 tasks · success" in words.stdout and "report:" in words.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(words.stdout)
    as_json = stateact("report", str(tmp_path), "--json")
    assert json.loads(as_json.stdout)["tasks"] == 6


def test_run_with_the_oracle_on_a_task_without_a_solution_says_so(tmp_path):
    task = write_task(tmp_path / "suite", file_task("t-os-009", "hello"))
    done = stateact("run", str(task), "--model", "script/oracle", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "the oracle has no reference solution for task t-os-009" in done.stderr
    assert "script file oracle does not exist" not in done.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_run_plays_the_oracle_and_writes_its_trajectory_page(tmp_path):
    require_image("base")
    task = write_task(
        tmp_path / "suite", file_task("t-os-001", "hello"), "echo hello > /home/user/out.txt\n"
    )
    out = tmp_path / "run"
    done = stateact(
        "run", str(task), "--model", "script/oracle", "--image", "base", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "result.json").read_text())["score"] == 1.0
    page = (out / "trajectory.html").read_text()
    assert "check_include_exclude" in page and "Checker" in page


@pytest.mark.docker
@pytest.mark.slow
def test_sandbox_exec_of_a_missing_command_is_one_sentence():
    require_image("base")
    done = stateact("sandbox", "exec", "--image", "base", "--", "nosuchcmd")
    assert done.returncode == 127
    assert done.stderr.strip() == "stateact: error: nosuchcmd is not a command in the sandbox."
    assert "timeout" not in done.stdout + done.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_a_short_script_that_finishes_too_early_says_why_in_the_error_column(tmp_path):
    require_image("base")
    source = tmp_path / "notes.txt"
    source.write_text("x")
    script = tmp_path / "short.json"
    calls = [("bash", {"command": "ls /home/user"}), ("finish", {"summary": "done"})]
    script.write_text(json.dumps([{"tool_calls": [{"name": n, "input": p}]} for n, p in calls]))
    out = tmp_path / "out"
    done = stateact(
        "batch",
        "--instruction",
        "Append a line to {file}",
        str(source),
        "--model",
        f"script/{script}",
        "--preset",
        "no-verify",
        "--image",
        "base",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr  # a verdict was reached: the script ran out
    with open(out / "summary.csv", newline="") as handle:
        row = next(csv.DictReader(handle))
    status, error = row["status"], row["error"]
    assert status == "script_exhausted"
    assert "its last call was refused" in error and "at least 3 steps" in error


def test_a_file_name_pattern_is_not_a_deliverable():
    """lh-writer-004 names `letter_<id>.docx`: the gate read `/home/user/letters/letter_` as a
    deliverable and rejected the oracle's correct letters (the experiment's false rejection)."""
    instruction = (
        "create /home/user/letters/letter_<id>.docx (e.g. /home/user/letters/letter_C101.docx), "
        "~/out/{name}.csv and read /home/user/a.csv."
    )
    assert named_paths(instruction) == ["/home/user/letters/letter_C101.docx", "/home/user/a.csv"]
