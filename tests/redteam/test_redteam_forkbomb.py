"""Red team: a fork bomb the agent leaves running (issue 22, item 9), against real containers.

A process table the agent keeps full leaves no room for a new process, not even the harness's root
freezer. The toolbox, already running, then stops and ends the agent's processes itself (it needs
no new process), the table empties, and the checker judges the work: the right verdict, with the
`agent_stopped` event saying who froze. A bomb the freeze cannot end (root's, under
`--agent-sudo`) leaves the checker's command unable to start: the run records `evaluation_error`
with that reason, never a silent 0. Each has its honest twin, the same work without the bomb.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PID_FILLER = (
    "nohup setsid python3 -c 'import os, time\nwhile True:\n    try:\n        pid = os.fork()\n"
    "    except OSError:\n        time.sleep(1)\n        continue\n    if pid == 0:\n"
    "        time.sleep(3600)\n        os._exit(0)' >/dev/null 2>&1 &"
)
"""Forks until the table is full, then keeps it full: every freed slot is taken again."""
ROOT_FILLER = f"echo password | sudo -S bash -c {shlex.quote(PID_FILLER)}"


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


def finish() -> dict:
    return {"tool_calls": [{"name": "finish", "input": {"summary": "done"}}]}


def verdict(passed: bool) -> dict:
    return {"tool_calls": [{"name": "verdict", "input": {"passed": passed, "gaps": []}}]}


def bomb_run(tmp_path: Path, work: str, bomb: str | None, sudo: bool = False) -> dict:
    image = "desktop" if sudo else "base"  # the base image has no sudo
    require_image(image)
    evaluator = {
        "func": "check_include_exclude",
        "result": {"type": "vm_command_line", "command": "cat /home/user/out.txt", "shell": True},
        "expected": {"type": "rule", "rules": {"include": ["done"], "exclude": []}},
    }
    task = Task.model_validate(
        {
            "id": "fork-bomb",
            "instruction": "Write done into /home/user/out.txt.",
            "config": [],
            "evaluator": evaluator,
            "base_dir": tmp_path,
        }
    )
    agent = [bash(f"echo {work} > /home/user/out.txt"), bash("cat out.txt"), bash("sleep 1")]
    agent += [bash(f"{bomb}\nsleep 3"), finish()] if bomb else [finish()]
    config = RunConfig(model="script/test")
    config.sandbox.image = image
    config.sandbox.pids_limit = 160 if sudo else 96
    config.sandbox.agent_sudo = sudo
    gate = ScriptedModel([verdict(True)] * 3)
    out = tmp_path / "run"
    result = run_task(task, config, out, model=ScriptedModel(agent), gate_model=gate)
    events = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    result["stops"] = [e for e in events if e.get("event") == "agent_stopped"]
    return result


def test_a_fork_bomb_left_running_is_ended_and_the_checker_judges_the_work(tmp_path):
    result = bomb_run(tmp_path, "done", PID_FILLER)
    assert result["status"] == "completed" and result["score"] == 1, result
    assert result["metrics"][0]["inputs"]["result"] == repr("done\n"), result["metrics"]
    assert result["stops"] and result["stops"][-1]["ended"] is True, result["stops"]
    assert result["stops"][-1].get("by") == "toolbox", result["stops"]


def test_a_fork_bomb_beside_wrong_work_scores_zero_from_the_checkers_real_answer(tmp_path):
    """Not a silent 0: the checker's command ran and read the wrong content."""
    result = bomb_run(tmp_path / "wrong", "nope", PID_FILLER)
    assert result["status"] == "completed" and result["score"] == 0, result
    assert result["metrics"][0]["inputs"]["result"] == repr("nope\n"), result["metrics"]


def test_the_same_work_without_the_bomb_scores_one(tmp_path):
    result = bomb_run(tmp_path, "done", None)
    assert result["status"] == "completed" and result["score"] == 1, result
    assert "by" not in result["stops"][-1], result["stops"]  # root's freezer did it


def test_a_root_fork_bomb_the_freeze_cannot_end_is_an_evaluation_error(tmp_path):
    """Under --agent-sudo the agent can leave root's processes, which the freeze (the agent's
    uid) does not reach: the checker's command cannot start, and the run says so."""
    result = bomb_run(tmp_path, "done", ROOT_FILLER, sudo=True)
    assert result["status"] == "evaluation_error" and result["score"] == 0, result
    assert "could not be started" in result["error"] or "want of resources" in result["error"]


def test_the_same_sudo_work_without_the_bomb_scores_one(tmp_path):
    result = bomb_run(tmp_path, "done", None, sudo=True)
    assert result["status"] == "completed" and result["score"] == 1, result
