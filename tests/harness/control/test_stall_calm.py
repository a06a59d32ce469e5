"""The stall escalation falls back after verified progress: stalls far apart in a long run that
keeps changing files each get feedback, while the same stalls back to back still end the run."""

from __future__ import annotations

import pytest

from harness.control.stall import StallDetector, StallRouter
from harness.kernel.records import RunRecord, load_events
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig, StallConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image
from tests.control_helpers import bash

LS = {"name": "bash", "input": {"command": "ls"}}


def test_changed_files_over_calm_after_turns_lower_the_level(tmp_path):
    record = RunRecord(tmp_path)
    detector = StallDetector(StallConfig(calm_after=3))
    router = StallRouter(record, ("feedback", "replan", "stop"))
    for _ in range(3):
        signal = detector.observe_action(LS, "same")
    assert router.route(signal) == "feedback" and router.level == 1
    for state in ("s1", "s2"):
        detector.observe_turn(state)
    assert not detector.sustained_progress()  # two turns are not enough
    detector.observe_turn("s2")  # an idle turn breaks the streak
    for state in ("s3", "s4", "s5"):
        detector.observe_turn(state)
    assert detector.sustained_progress() and not detector.sustained_progress()
    router.calm("files changed")
    assert router.level == 0
    router.calm("again")  # never below zero, and nothing recorded for it
    calms = [e for e in load_events(tmp_path) if e["event"] == "stall_calm"]
    assert [(e["level"], e["reason"]) for e in calms] == [(0, "files changed")]


def test_a_stall_resets_the_progress_streak():
    detector = StallDetector(StallConfig(calm_after=2))
    detector.observe_turn("a")
    for _ in range(3):
        detector.observe_action(LS, "same")  # the third is a repeat signal
    detector.observe_turn("b")
    assert not detector.sustained_progress()


def looping_then_working(episodes: int, work_turns: int) -> list[dict]:
    turns = []
    for episode in range(episodes):
        turns += [bash("ls /home/user")] * 3
        turns += [bash(f"echo {episode} > /home/user/f{episode}-{n}") for n in range(work_turns)]
    return turns


def run(tmp_path, turns: list[dict], name: str) -> tuple[dict, list[dict]]:
    config = RunConfig(model="script/test")
    config.sandbox.image = "base"
    config.subagents.enabled = []
    config.stall.no_progress_turns = 50
    config.loop.max_turns = len(turns)
    task = Task.model_validate(
        {"id": name, "instruction": "Sort the files.", "evaluator": {}, "base_dir": tmp_path}
    )
    result = run_task(
        task, config, tmp_path / name, model=ScriptedModel(turns), gate_model=ScriptedModel([])
    )
    return result, load_events(tmp_path / name)


@pytest.mark.docker
@pytest.mark.slow
def test_stalls_far_apart_in_a_moving_run_never_end_it(tmp_path):
    require_image("base")
    result, events = run(tmp_path, looping_then_working(episodes=4, work_turns=3), "moving")
    assert result["status"] != "stalled", result
    stalls = [e["response"] for e in events if e["event"] == "stall"]
    assert stalls == ["feedback"] * 4
    # The stall watch runs after each turn's tool results, so every episode's work earns its calm.
    assert len([e for e in events if e["event"] == "stall_calm"]) == 4

    # The same four stalls with no progress between end the run at the third (feedback, replan,
    # stop).
    result, events = run(tmp_path, looping_then_working(episodes=4, work_turns=0), "idle")
    assert result["status"] == "stalled"
    assert [e["response"] for e in events if e["event"] == "stall"] == [
        "feedback",
        "replan",
        "stop",
    ]
