"""Concurrent StateAct processes on one engine never remove each other's snapshots, images or
containers, and an object that vanished anyway is one clear sentence (issue 22, item 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandboxes import SandboxConfig, SandboxError, open_sandbox
from sandboxes.lifecycle import owner_is_gone
from tests.conftest import REPO, require_image

ROUNDS = 3


def test_a_snapshot_of_a_run_in_progress_outlives_the_previous_attempts_result(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "result.json").write_text("{}")  # the attempt before this one
    previous = (run_dir / "result.json").stat().st_mtime
    assert not owner_is_gone(f"run:{run_dir}", created_at=previous + 5)
    assert owner_is_gone(f"run:{run_dir}", created_at=previous - 5)  # finished after the snapshot


@pytest.mark.docker
def test_a_vanished_container_is_one_clear_sentence():
    require_image("base")
    with open_sandbox(SandboxConfig(image="base")) as sandbox:
        sandbox.container.remove(force=True)  # as a careless other process would
        with pytest.raises(SandboxError, match="removed while this run used it"):
            sandbox.snapshot()
        with pytest.raises(SandboxError, match="removed while this run used it"):
            sandbox.exec(["true"])


def write_suite(folder: Path) -> Path:
    """Three tasks whose reference solutions (the oracle) score 1, and a gate root for the first."""
    (folder / "suite" / "tasks").mkdir(parents=True)
    (folder / "suite" / "solutions").mkdir()
    for n in (1, 2, 3):
        task = {
            "id": f"t{n}",
            "instruction": f"Write hello{n} into /home/user/out.txt.",
            "config": [],
            "evaluator": {
                "func": "check_include_exclude",
                "result": {"type": "vm_command_line", "command": "cat /home/user/out.txt"},
                "expected": {"type": "rule", "rules": {"include": [f"hello{n}"], "exclude": []}},
            },
        }
        (folder / "suite" / "tasks" / f"t{n}.json").write_text(json.dumps(task))
        (folder / "suite" / "solutions" / f"t{n}.sh").write_text(f"echo hello{n} > out.txt\n")
    (folder / "root" / "home" / "user").mkdir(parents=True)
    (folder / "root" / "home" / "user" / "out.txt").write_text("hello1\n")
    return folder


def start(*args: str, log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    handle = log.open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        stdout=handle,
        stderr=handle,
        cwd=REPO,
        env=env,
    )


@pytest.mark.docker
@pytest.mark.slow
def test_two_suites_and_a_gate_at_once_leave_each_other_alone(tmp_path):
    """The acceptance run: two suites (two tasks at a time each) and `stateact gate`, started
    together, three times: every process exits 0, no internal error, every task scores 1."""
    require_image("base")
    folder = write_suite(tmp_path)
    suite, task = folder / "suite", folder / "suite" / "tasks" / "t1.json"
    for round_number in range(ROUNDS):
        here = folder / f"round-{round_number}"
        here.mkdir()
        common = ["--model", "script/oracle", "--image", "base", "--parallel", "2"]
        processes = {
            "suite-a": start(
                "suite", str(suite), *common, "--out", str(here / "a"), log=here / "a.log"
            ),
            "suite-b": start(
                "suite", str(suite), *common, "--out", str(here / "b"), log=here / "b.log"
            ),
            "gate": start(
                "gate",
                str(task),
                "--root",
                str(folder / "root"),
                "--image",
                "base",
                "--json",
                log=here / "gate.log",
            ),
        }
        deadline = time.monotonic() + 900
        for name, process in processes.items():
            code = process.wait(timeout=max(1, deadline - time.monotonic()))
            text = (here / f"{name.removeprefix('suite-')}.log").read_text()
            assert code == 0 and "internal error" not in text, (name, text[-2000:])
        for out in ("a", "b"):
            rows = [json.loads(x) for x in (here / out / "results.jsonl").read_text().splitlines()]
            assert sorted((r["task_id"], r["status"], r["score"]) for r in rows) == [
                (f"t{n}", "completed", 1.0) for n in (1, 2, 3)
            ], rows
        gate_output = (here / "gate.log").read_text()
        assert '"passed": true' in gate_output, gate_output[-2000:]
