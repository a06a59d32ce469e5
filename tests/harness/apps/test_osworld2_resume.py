"""An OSWorld 2.0 run stopped inside a phase resumes inside it: from the snapshot taken after the
previous judged phase, the phase set up once more by the benchmark (on a machine that predates its
setup), the phase's recorded tool calls replayed, the main agent's history and the task's counters
restored, in the same trajectory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, require_image
from tests.harness.apps.test_osworld2_run import FINISH, STANDIN, bash, models

__all__ = ["models"]  # the fixture

RESUME_TASK = STANDIN / "tasks" / "task_resume.py"
SLOW = "sleep 12; echo slept"
"""The call the run is killed in: the process dies while the sandbox runs it."""
PHASE_ONE = [
    bash("echo beta >> ~/report.txt"),
    bash("cat ~/setup-log.txt"),
    bash(SLOW),
    bash("echo gamma >> ~/report.txt"),
    bash("cat ~/report.txt"),
    FINISH,
]
PHASE_ZERO = [bash("echo alpha > ~/report.txt"), bash("ls ~"), bash("cat ~/report.txt"), FINISH]


def _events(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "trajectory.jsonl").open()]


def test_where_a_stopped_run_resumes():
    """From the trajectory alone: inside the phase whose setup finished (its first `setup_done`
    after the previous verdict, however often it was resumed), only in the default mode."""
    from harness.apps.osworld2_resume import phase_start

    def setup(phase):
        return {"event": "setup_done", "phase": phase}

    events = [setup(0), {"event": "model_turn"}, {"event": "phase_judged", "phase": 0}]
    assert phase_start(events, 1) is None  # phase 1's setup never finished: set it up afresh
    events += [setup(1), {"event": "model_turn"}, {"event": "resumed"}, setup(1)]
    assert phase_start(events, 1) == 3 and phase_start(events, 0) == 0
    assert phase_start([{"event": "setup_done", "started_at": 1.0}], 0) is None  # not OSWorld 2.0


def test_other_modes_and_fresh_runs_do_not_resume_inside_a_phase(tmp_path):
    from harness.apps.osworld2_resume import resume_point

    (tmp_path / "trajectory.jsonl").write_text(
        json.dumps({"event": "setup_done", "phase": 0})
        + "\n"
        + json.dumps({"event": "model_turn", "agent": "main", "content": []})
        + "\n"
    )
    point = resume_point(tmp_path, "stateact")
    assert (point.phase, point.in_phase, point.milestone, point.turns_before) == (0, True, None, 0)
    assert resume_point(tmp_path, "screenshot") is None  # its phase starts again
    assert resume_point(tmp_path / "empty", "stateact") is None


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_run_killed_inside_a_phase_resumes_there(tmp_path, models):  # noqa: F811
    require_image("desktop")
    first_script, second_script = tmp_path / "first.json", tmp_path / "second.json"
    first_script.write_text(json.dumps(PHASE_ZERO + PHASE_ONE))
    # a scripted model continues after the assistant turns of the history it is given: the
    # restored history is phase 1's, so the resumed run's script is phase 1's turns
    second_script.write_text(json.dumps(PHASE_ONE))
    run_dir = tmp_path / "run"

    def command(script):
        return [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(RESUME_TASK),
            "--osworld2",
            str(STANDIN),
            "--judge-model",
            "openai/judge-small",
            "--image",
            "desktop",
            "--preset",
            "no-verify",
            "--model",
            f"script/{script}",
            "--out",
            str(run_dir),
        ]

    with models([]) as judge:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": judge.base_url}
        first = subprocess.Popen(
            command(first_script), cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        trajectory = run_dir / "trajectory.jsonl"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and first.poll() is None:
            if trajectory.exists() and SLOW in trajectory.read_text():
                break
            time.sleep(0.2)
        else:
            first.kill()
            pytest.fail(f"the run never reached its slow call: {first.communicate()[1][-2000:]}")
        time.sleep(1)
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        assert not (run_dir / "result.json").exists()
        before = _events(run_dir)
        assert [e["phase"] for e in before if e["event"] == "phase_judged"] == [0]

        second = subprocess.run(
            [*command(second_script), "--resume"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert second.returncode == 0, second.stderr
    result = json.loads((run_dir / "result.json").read_text())
    # the stand-in's verdicts: each report line and each setup line exactly once
    assert (result["status"], result["score"], result["phases_judged"]) == ("completed", 1.0, 2)
    first_verdict, second_verdict = result["phase_results"]
    judged_before_the_kill = next(e for e in before if e["event"] == "phase_judged")
    assert first_verdict["checkpoints"] == judged_before_the_kill["checkpoints"]  # kept
    assert first_verdict["score"] == 1.0
    assert [c["score"] for c in second_verdict["checkpoints"]] == [1.0, 1.0]
    assert result["main_turns"] == len(PHASE_ZERO) + len(PHASE_ONE)  # the whole task's

    events = _events(run_dir)
    harness_resumed, agent_resumed = [e for e in events if e["event"] == "resumed"]
    assert (harness_resumed["after_phase"], harness_resumed["phase"]) == (0, 1)
    assert harness_resumed["in_phase"] is True
    assert agent_resumed["replayed_calls"] == 3  # beta, the log read, the interrupted sleep
    setups = [e["phase"] for e in events if e["event"] == "setup_done"]
    assert setups == [0, 1, 1]  # phase 1 set up again on the snapshot from before its setup
    main_turns = [e["turn"] for e in events if e["event"] == "model_turn" and e["agent"] == "main"]
    assert main_turns == [1, 2, 3, 4, 1, 2, 3, 4, 5, 6]  # phase 1's numbering goes on
    assert [e["phase"] for e in events if e["event"] == "phase_judged"] == [0, 1]


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_the_turn_budget_counts_the_whole_task(tmp_path, models):  # noqa: F811
    """Six turns for two phases: phase 0 takes four, so phase 1's agent gets two (it writes
    beta, looks once) and the benchmark then judges what is there."""
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.models.scripted import ScriptedModel
    from tests.harness.apps.test_osworld2_run import MULTIPHASE, _config

    model = ScriptedModel(PHASE_ZERO + PHASE_ONE)
    with models([{"text": "yes"}]):
        result = run_osworld2_task(MULTIPHASE, _config(max_turns=6), tmp_path / "r", model=model)
    assert (result["status"], result["main_turns"], result["phases_judged"]) == ("turn_limit", 6, 2)
    assert "6-turn limit" in result["error"]
    assert [p["score"] for p in result["phase_results"]] == [1.0, 1.0]  # beta was written


def test_a_resumed_run_keeps_its_inline_verdicts_and_does_not_take_them_again():
    from harness.apps.osworld2_inline import InlineEvaluations

    inline = InlineEvaluations([300, 150, 20], record=None)
    taken = {"phase": 0, "step": 20, "score": 0.5, "checkpoints": [], "judges": [], "error": None}
    inline.restore([{"event": "inline_evaluation", "time": 1.0, "agent": "harness", **taken}])
    assert inline.taken == [taken] and inline.pending == [150, 300]
