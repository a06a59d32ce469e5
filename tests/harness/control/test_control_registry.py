"""A control mode is one module and one registry line: a trivial controller registered here runs
through the real runner (a real bubblewrap sandbox, the task's setup, its checker and the run
record), and an unknown mode is one clear error in the result."""

from __future__ import annotations

import json

import pytest

from harness.control import CONTROLLERS, control_mode
from harness.kernel.core import Finished
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task

pytestmark = pytest.mark.usefixtures("local_sandbox")  # skips where bubblewrap is missing

RESULT = "/home/user/result.txt"


class WriteDone:
    """Writes the answer with one shell command and reports completion; no model is asked."""

    runs: list[str] = []

    def run(self, context):
        code, output = context.sandbox.exec(["bash", "-c", f"echo done > {RESULT}"])
        assert code == 0, output
        WriteDone.runs.append(context.task.id)
        return Finished("completed", "wrote the answer")


@pytest.fixture
def trivial_mode():
    control_mode("trivial-test")(WriteDone)
    yield "trivial-test"
    del CONTROLLERS["trivial-test"]


def done_task(tmp_path) -> Task:
    return Task.model_validate(
        {
            "id": "trivial-mode",
            "instruction": f"Write done into {RESULT}.",
            "config": [{"type": "execute", "parameters": {"command": ["rm", "-f", RESULT]}}],
            "evaluator": {
                "func": "check_include_exclude",
                "result": {"type": "vm_command_line", "command": f"cat {RESULT}", "shell": True},
                "expected": {"type": "rule", "rules": {"include": ["done"], "exclude": []}},
            },
            "base_dir": tmp_path,
        }
    )


def test_a_registered_controller_runs_through_the_real_runner(tmp_path, trivial_mode):
    config = RunConfig(control=trivial_mode)
    config.sandbox.backend = "local"
    result = run_task(done_task(tmp_path), config, tmp_path / "run", model=ScriptedModel([]))
    assert WriteDone.runs == ["trivial-mode"]
    assert result["status"] == "completed", result
    assert result["score"] == 1.0 and result["control"] == trivial_mode
    events = [json.loads(line) for line in (tmp_path / "run/trajectory.jsonl").open()]
    assert [e["event"] for e in events if e["event"] in ("setup_done", "result")] == [
        "setup_done",
        "result",
    ]


def test_an_unknown_control_mode_is_one_clear_error(tmp_path):
    config = RunConfig(control="no-such-mode")
    config.sandbox.backend = "local"
    result = run_task(done_task(tmp_path), config, tmp_path / "run", model=ScriptedModel([]))
    assert result["status"] == "error" and result["score"] == 0.0
    assert "unknown control mode 'no-such-mode'" in result["error"]
    assert "stateact" in result["error"] and "andor" in result["error"]
