"""`stateact suite PATH… --dry-run --summary`: the metrics and getters the tasks use, implemented
or not."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tasks.coverage import evaluator_coverage
from tests.conftest import OSWORLD_EXAMPLES, stateact


def write_task(folder: Path, task_id: str, evaluator: dict) -> None:
    task = {"id": task_id, "instruction": "do it", "config": [], "evaluator": evaluator}
    (folder / f"{task_id}.json").write_text(json.dumps(task))


@pytest.fixture
def tasks_folder(tmp_path):
    file = {"type": "vm_file", "path": "/home/user/a.docx", "dest": "a.docx"}
    write_task(
        tmp_path,
        "t1",
        {"func": "compare_docx_files", "result": file, "expected": {"type": "cloud_file"}},
    )
    write_task(
        tmp_path,
        "t2",
        {
            "func": ["compare_docx_files", "no_such_metric"],
            "result": [file, {"type": "no_such_getter"}],
            "expected": [{"type": "vm_file"}, {"type": "rule", "rules": {}}],
        },
    )
    (tmp_path / "broken.json").write_text('{"id": "b", "instruction": "x", "evaluator": 3}')
    return tmp_path


def rows(stdout: str) -> dict[tuple[str, str], tuple[str, int]]:
    table = {}
    for line in stdout.splitlines()[1:]:
        kind, name, status, tasks = line.split()
        table[kind, name] = (status, int(tasks))
    return table


def test_summary_lists_each_metric_and_getter_with_its_task_count(tasks_folder):
    done = stateact("suite", str(tasks_folder), "--dry-run", "--summary")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == ["kind", "name", "status", "tasks"]
    assert rows(done.stdout) == {
        ("metric", "compare_docx_files"): ("implemented", 2),
        ("metric", "no_such_metric"): ("MISSING", 1),
        ("getter", "vm_file"): ("implemented", 2),
        ("getter", "cloud_file"): ("implemented", 1),
        ("getter", "rule"): ("implemented", 1),
        ("getter", "no_such_getter"): ("MISSING", 1),
    }
    assert "3 task(s)" in done.stderr and "1 task(s) use only implemented ones" in done.stderr
    assert "1 unreadable task file(s)" in done.stderr


def test_without_summary_the_dry_run_still_prints_one_json_line_per_task(tasks_folder):
    done = stateact("suite", str(tasks_folder), "--dry-run")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["id"] for r in records) == ["broken", "t1", "t2"]
    assert [r["runnable"] for r in records if r["id"] == "broken"] == [False]


def test_summary_needs_dry_run(tasks_folder):
    done = stateact("suite", str(tasks_folder), "--summary")
    assert done.returncode == 2
    assert "--summary goes with --dry-run" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not OSWORLD_EXAMPLES.is_dir(), reason="the OSWorld task files are not here")
def test_counts_over_the_osworld_tasks_match_a_plain_count_of_the_files():
    paths = sorted(OSWORLD_EXAMPLES.rglob("*.json"))
    users: Counter = Counter()
    for path in paths:
        func = json.loads(path.read_text())["evaluator"]["func"]
        users.update(set(func if isinstance(func, list) else [func]))
    coverage = evaluator_coverage(paths)
    assert coverage.tasks == 369 and coverage.unreadable == 0
    counted = {row.name: row.tasks for row in coverage.rows if row.kind == "metric"}
    assert counted == dict(users)
    implemented = {row.name for row in coverage.rows if row.kind == "metric" and row.implemented}
    assert {"compare_table", "compare_pptx_files", "compare_docx_files", "check_mp3_meta"} <= (
        implemented
    )
