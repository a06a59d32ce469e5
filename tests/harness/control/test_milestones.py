"""Milestone checkpoints: a killed run resumes from the sandbox snapshot of its last verified
milestone, replaying only the tool calls after it; the snapshot survives the kill (and the docker
reaper) and is removed once the run has a result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.control.milestones import last_milestone, load_milestones, snapshot_of
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes import SandboxConfig, open_sandbox
from tasks.schema import Task
from tests.conftest import REPO, require_image
from tests.control_helpers import RoutedModel, bash, call

FIRST, SECOND = "/home/user/first.txt", "/home/user/second.txt"
INSTRUCTION = f"Write alpha into {FIRST} and beta into {SECOND}."
REQUIREMENTS = [
    {
        "text": "first.txt holds alpha",
        "probe": {"kind": "file_grep", "path": FIRST, "patterns": ["alpha"]},
    },
    {
        "text": "second.txt holds beta",
        "probe": {"kind": "file_grep", "path": SECOND, "patterns": ["beta"]},
    },
]
AGENT = [
    bash(f"echo alpha > {FIRST}"),
    bash(f"cat {FIRST}"),
    bash("ls /home/user"),
    call("finish", summary="first part"),  # the gate rejects (second.txt missing) but verifies r1
    bash(f"echo beta > {SECOND}"),
    bash("sleep 5; echo slept"),  # killed here
    bash(f"cat {SECOND}"),
    call("finish", summary="both written"),
]


def child_run(run_dir: str, backend: str, resume: bool) -> None:
    """The run itself, in a child process the test can kill."""
    config = RunConfig(model="script/test")
    config.sandbox.backend = backend
    config.sandbox.image = "base"
    config.task_state.enabled = True
    config.subagents.enabled = []
    task = Task.model_validate(
        {
            "id": "milestones",
            "instruction": INSTRUCTION,
            "config": [],
            "evaluator": {},
            "base_dir": run_dir,
        }
    )
    model = RoutedModel(lambda system, text: REQUIREMENTS, list(AGENT))
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    run_task(task, config, Path(run_dir), resume=resume, model=model, gate_model=gate)


def start(run_dir: Path, backend: str, resume: bool) -> subprocess.Popen:
    code = (
        f"from tests.harness.control.test_milestones import child_run; child_run({str(run_dir)!r}, "
        f"{backend!r}, {resume!r})"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def image_exists(ref: str) -> bool:
    from docker.errors import ImageNotFound

    from sandboxes.docker_backend import docker_client

    try:
        docker_client().images.get(ref)
    except ImageNotFound:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_killed_run_resumes_from_its_last_milestone(tmp_path, backend):
    if backend == "docker":
        require_image("base")
    elif not __import__("shutil").which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    run_dir = tmp_path / "run"
    first = start(run_dir, backend, resume=False)
    trajectory = run_dir / "trajectory.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if trajectory.exists() and "sleep 5" in trajectory.read_text():
            break
        if first.poll() is not None:
            pytest.fail(f"the run ended early: {first.stderr.read().decode()[-2000:]}")
        time.sleep(0.2)
    else:
        first.kill()
        pytest.fail("the run never reached the slow step")
    time.sleep(1)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert not (run_dir / "result.json").exists()

    milestone = last_milestone(run_dir)
    assert (
        milestone is not None and milestone["number"] == 1 and milestone["requirements"] == ["r1"]
    )
    # The snapshot holds the state of the milestone: before replay, first.txt is there, second.txt
    # not.
    # (For docker this sandbox is also the first of this process, so the orphan reaper has just
    # run.)
    with open_sandbox(SandboxConfig(backend=backend, image="base"), snapshot_of(milestone)) as view:
        assert view.call("file.stat", path=FIRST)["exists"]
        assert not view.call("file.stat", path=SECOND)["exists"]

    second = start(run_dir, backend, resume=True)
    _, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr.decode()[-3000:]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    events = [json.loads(line) for line in trajectory.read_text().splitlines()]
    resumed = next(e for e in events if e["event"] == "resumed")
    assert resumed["since_event_index"] == milestone["event_index"]
    assert (
        resumed["replayed_calls"] == 2
    )  # echo beta and the interrupted sleep, not the five calls of the whole run
    main_turns = [e["turn"] for e in events if e["event"] == "model_turn" and e["agent"] == "main"]
    assert main_turns == list(range(1, 9))
    changes = [json.loads(line) for line in (run_dir / "state.jsonl").read_text().splitlines()]
    assert [(c["requirement"], c["after"]) for c in changes if c["type"] == "change"] == [
        ("r1", "VERIFIED"),
        ("r2", "VERIFIED"),
    ]
    milestones = load_milestones(run_dir)
    assert len(milestones) == 2 and all(
        m["discarded"] for m in milestones
    )  # removed with the result
    for kept in milestones:
        ref = kept["snapshot"]["ref"]
        assert not (image_exists(ref) if backend == "docker" else Path(ref).exists())
