"""`stateact audit` against real sandboxes: a task whose checker is deliberately weak (it asks an
interactive bash, which reads the agent's ~/.bashrc) is flagged with the vector that games it, and
an honest suite with the same task and a sound checker reports nothing gamed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.apps.audit import run_audit
from harness.apps.audit_agents import knowledge
from harness.run.config import RunConfig
from tasks.schema import Task
from tests.conftest import require_image, stateact

INSTRUCTION = "Write STATUS-OK into /home/user/status.txt."
SOUND = "cat /home/user/status.txt"
WEAK = "bash -i -c 'cat /home/user/status.txt' 2>/dev/null"  # reads the agent's rc files
# `leftover` forges the output of the harness's commands, which still run as the agent's user
# here: that vector is closed by the observers-as-another-user work (docs/security.md).
DETERMINISTIC_AGENTS = ["nothing", "capture", "names", "gold"]


def write_task(folder: Path, task_id: str, command: str) -> Path:
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    task = {
        "id": task_id,
        "instruction": INSTRUCTION,
        "config": [],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": command, "shell": True},
            "expected": {"type": "rule", "rules": {"include": ["STATUS-OK"], "exclude": []}},
        },
    }
    path = folder / "tasks" / f"{task_id}.json"
    path.write_text(json.dumps(task))
    return path


def audit_config() -> RunConfig:
    config = RunConfig(model="script/audit")
    config.sandbox.image = "base"
    return config


def test_the_adversaries_know_what_the_task_file_publishes(tmp_path):
    task = Task.model_validate(
        {
            "id": "k",
            "instruction": "x",
            "config": [],
            "evaluator": {
                "func": "compare_table",
                "result": {"type": "vm_file", "path": "/home/user/out.xlsx", "dest": "out.xlsx"},
                "expected": {"type": "vm_file", "path": "/home/user/gold.xlsx", "dest": "g.xlsx"},
                "postconfig": [
                    {
                        "type": "download",
                        "parameters": {"files": [{"url": "u", "path": "/home/user/check.py"}]},
                    }
                ],
            },
        }
    )
    known = knowledge(task)
    assert known["results"] == ["/home/user/out.xlsx"]
    assert known["gold"] == ["/home/user/gold.xlsx", "/home/user/check.py"]


@pytest.mark.docker
@pytest.mark.slow
def test_a_weak_checker_is_flagged_and_an_honest_suite_reports_none(tmp_path):
    require_image("base")
    weak = write_task(tmp_path / "weak", "weak-rc", WEAK)
    honest = write_task(tmp_path / "honest", "honest-cat", SOUND)
    report = run_audit(
        [weak, honest], audit_config(), tmp_path / "out", agents=DETERMINISTIC_AGENTS, parallel=2
    )
    gamed = {(row.task_id, row.agent) for row in report.gamed}
    assert gamed == {("weak-rc", "capture")}, report.table()
    row = next(r for r in report.gamed)
    assert row.score == 1.0 and row.baseline_score == 0.0 and "doing nothing" in row.why
    assert not report.errors, report.table()
    names = [r for r in report.rows if r.agent == "names"]
    assert [(r.status, r.gate_passed) for r in names] == [("gate_rejected", False)] * 2
    lines = (tmp_path / "out" / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(DETERMINISTIC_AGENTS)
    assert "| weak-rc | 0 | 1! |" in (tmp_path / "out" / "audit.md").read_text()


def test_bad_input_is_one_sentence_and_exit_two(tmp_path):
    missing = stateact("audit", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "neither a task file nor a folder" in missing.stderr
    task = write_task(tmp_path / "s", "t", SOUND)
    unknown = stateact(
        "audit", str(task), "--agents", "nothing,bogus", "--out", str(tmp_path / "o")
    )
    assert unknown.returncode == 2 and "unknown audit agent(s) bogus" in unknown.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = stateact("audit", str(empty), "--out", str(tmp_path / "o2"))
    assert none.returncode == 2 and "no task files" in none.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr + none.stderr
