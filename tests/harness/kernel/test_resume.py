"""`kill -9` during a run, then `stateact run --resume`: the task finishes with one coherent
trajectory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, require_image
from tests.harness.apps.test_agent_e2e import EDIT_CODE, READ_BACK, calls, make_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_kill_then_resume_finishes_the_task(tmp_path):
    require_image("base")
    task = make_task(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                calls(("plan", {"items": [{"text": "formula in B1", "status": "in_progress"}]})),
                calls(("python", {"code": EDIT_CODE})),
                calls(("bash", {"command": "sleep 6; echo slept"})),
                calls(("bash", {"command": READ_BACK})),
                calls(("bash", {"command": "ls -la /home/user"})),
                calls(("finish", {"summary": "done"})),
            ]
        )
    )
    run_dir = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        str(task),
        "--model",
        f"script/{script}",
        "--preset",
        "no-verify",
        "--image",
        "base",
        "--out",
        str(run_dir),
    ]
    first = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    trajectory = run_dir / "trajectory.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if trajectory.exists() and "sleep 6" in trajectory.read_text():
            break
        time.sleep(0.2)
    else:
        first.kill()
        pytest.fail("the run never reached the slow step")
    time.sleep(1)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert not (run_dir / "result.json").exists()

    second = subprocess.run(
        [*command, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert result["status"] == "completed" and result["score"] == 1.0
    assert result["main_turns"] == 6

    events = [json.loads(line) for line in trajectory.read_text().splitlines()]
    assert [e["event"] for e in events].count("resumed") == 1
    main_turns = [e["turn"] for e in events if e["event"] == "model_turn" and e["agent"] == "main"]
    assert main_turns == [1, 2, 3, 4, 5, 6]  # one coherent numbering across the kill
    resumed = next(e for e in events if e["event"] == "resumed")
    assert resumed["replayed_calls"] == 2  # the python edit and the interrupted bash call
