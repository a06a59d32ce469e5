"""Stall and loop detection: the three signals, the escalating router, and the default mode's
watch that routes a looping main agent through feedback and a forced replan to the end of the run
as `stalled`."""

from __future__ import annotations

import json

from harness.control.stall import StallDetector, StallRouter
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig, StallConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.control_helpers import bash

LS = {"name": "bash", "input": {"command": "ls"}}


def test_same_action_with_same_observation_three_times_is_a_loop():
    detector = StallDetector(StallConfig())
    assert detector.observe_action(LS, "a b") is None
    assert detector.observe_action(LS, "a b") is None
    signal = detector.observe_action(LS, "a b")
    assert signal.kind == "repeat" and signal.count == 3 and "ran 3 times" in signal.detail
    assert detector.observe_action(LS, "a b") is None  # the window restarts after a signal


def test_a_changed_observation_is_not_a_loop():
    detector = StallDetector(StallConfig())
    assert [detector.observe_action(LS, out) for out in ("a", "a", "a b")] == [None, None, None]


def test_no_state_change_and_no_new_output_over_n_turns():
    detector = StallDetector(StallConfig(no_progress_turns=3))
    detector.observe_action(LS, "x")
    assert detector.observe_turn("state-1") is None  # first look at the state
    signals = [detector.observe_turn("state-1") for _ in range(3)]
    assert signals[:2] == [None, None] and signals[2].kind == "no_progress"
    detector.observe_action({"name": "bash", "input": {"command": "cat new"}}, "fresh output")
    assert detector.observe_turn("state-1") is None  # new output counts as progress
    assert detector.observe_turn("state-2") is None  # so does a changed file


def test_repeated_gate_gaps_are_a_loop():
    detector = StallDetector(StallConfig())
    assert detector.observe_gate(["B7 is empty"]) is None
    assert detector.observe_gate(["b7  is EMPTY"]).kind == "gate_loop"
    assert detector.observe_gate(["something else"]) is None


def test_router_escalates_and_records(tmp_path):
    from harness.kernel.records import RunRecord, load_events

    record = RunRecord(tmp_path)
    router = StallRouter(record)
    detector = StallDetector(StallConfig())
    responses = []
    for _ in range(5):
        for _ in range(3):
            signal = detector.observe_action(LS, "same")
        responses.append(router.route(signal))
    assert responses == ["feedback", "replan", "fresh_worker", "stop", "stop"]
    assert [e["response"] for e in load_events(tmp_path) if e["event"] == "stall"] == responses


def test_a_looping_main_agent_gets_feedback_then_a_replan_then_is_stopped(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    agent = ScriptedModel([bash("ls /home/user")] * 12)
    config = RunConfig(model="script/test")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    config.stall.no_progress_turns = 50
    task = Task.model_validate(
        {
            "id": "loop",
            "instruction": "Find the file.",
            "config": [],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )
    result = run_task(task, config, tmp_path / "run", model=agent, gate_model=ScriptedModel([]))
    assert result["status"] == "stalled"
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    stalls = [(e["kind"], e["response"]) for e in events if e["event"] == "stall"]
    assert stalls == [("repeat", "feedback"), ("repeat", "replan"), ("repeat", "stop")]
    assert result["main_turns"] == 9  # the stop came before a tenth model call
    fourth, seventh = agent.calls[3]["messages"][-1], agent.calls[6]["messages"][-1]
    assert "<stall-detected>" in json.dumps(fourth) and "<replan-required>" in json.dumps(seventh)
    assert "<stall-detected>" not in json.dumps(agent.calls[2]["messages"][-1])
