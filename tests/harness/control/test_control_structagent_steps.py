"""`--control structagent`'s low-level step verifier and DONE auditor through the real runner and a
real (bubblewrap) sandbox with scripted models: a `no_effect` step goes back to the actor as
feedback, an `off_track` step ends the subgoal early and hands it to recovery, a `complete` step
ends it for the boundary verifier; with the finish gate off the auditor refuses a DONE once and
accepts the next, and with the gate on it is not called."""

from __future__ import annotations

import base64
import json

from harness.control.structagent.observe import Observation
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tests.control_helpers import RoutedModel, bash, call
from tests.harness.control.test_control_structagent import (
    CONTINUE,
    DONE,
    NOTE,
    SUMMARY,
    Roles,
    _task,
)

OTHER = "/home/user/other.txt"


def _config(gate: bool = False, **structagent) -> RunConfig:
    config = RunConfig(model="script/test", control="structagent")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    config.gate.enabled = gate
    for key, value in structagent.items():
        setattr(config.structagent, key, value)
    return config


def _events(out, name: str) -> list[dict]:
    events = [json.loads(line) for line in (out / "trajectory.jsonl").open()]
    return [e for e in events if e["event"] == name]


def _step(status: str, evidence: str, feedback: str = "") -> dict:
    return {"status": status, "evidence": evidence, "feedback": feedback}


def _summary_verdict() -> dict:
    decision = {"id": "r2", "verified": True, "evidence": "summary.txt reads 'words: 1'"}
    return {"decisions": [decision], "values": []}


def test_the_step_verifier_feeds_back_no_effect_and_ends_a_subgoal_off_track(
    tmp_path, local_sandbox
):
    del local_sandbox
    roles = Roles(
        plans=[
            {"subgoal": f"Write hello into {NOTE}", "targets": ["r1"]},
            {"subgoal": f"Write the word count into {SUMMARY}", "targets": ["r2"]},
            DONE,
        ],
        verdicts=[_summary_verdict()],
        steps=[
            _step("no_effect", "note.txt was not touched", "write note.txt itself"),
            _step("off_track", "note.txt now says bye, not hello"),
            _step("complete", "note.txt says hello"),
            CONTINUE,
        ],
    )
    actor = [
        bash(f"echo hello > {OTHER}"),  # no_effect: the wrong file
        bash(f"echo bye > {NOTE}"),  # off_track: the subgoal ends here, without a report
        bash(f"echo hello > {NOTE}"),  # the recovery subgoal: complete, no report needed
        bash(f"echo 'words: 1' > {SUMMARY}"),
        call("report", text="summary written"),
    ]
    model = RoutedModel(roles, actor)
    out = tmp_path / "run"
    result = run_task(_task(tmp_path), _config(), out, model=model)
    assert result["status"] == "completed" and result["score"] == 1.0, result
    steps = _events(out, "structagent_step")
    assert [s["status"] for s in steps] == ["no_effect", "off_track", "complete", "continue"]
    # headless: the verifier compared the files before and after the step
    assert f"{OTHER} (new" in roles.seen["step"][0] and "echo hello" in roles.seen["step"][0]
    requests = [json.dumps(c["messages"]) for c in model.script.calls]
    feedback = "Your last step had no effect: note.txt was not touched. write note.txt itself"
    assert feedback in requests[1]  # the actor's next request carried the feedback
    assert "no effect" not in requests[2]  # once only; the recovery actor starts fresh
    # the first actor got no third turn: the next request is the recovery actor's first
    recovery_seed = json.dumps(model.script.calls[2]["messages"][0])
    assert "<your-subgoal>\\nThe last attempt was stopped as off track" in recovery_seed
    assert len(model.script.calls) == 5
    subgoals = _events(out, "structagent_subgoal")
    assert [(s["origin"], s["step_end"], s["reported"]) for s in subgoals] == [
        ("planner", "off_track", False),
        ("recovery: off_track", "complete", True),
        ("planner", None, True),
    ]
    assert subgoals[1]["verified"] == ["r1"]  # the boundary verifier's probe, after `complete`
    recoveries = [(e["requirement"], e["diagnosis"]) for e in _events(out, "structagent_recovery")]
    assert recoveries == [("r1", "off_track")]
    assert "(the step verifier ended the subgoal as off_track: note.txt now says bye" in (
        recovery_seed
    )
    stats = result["control_stats"]["structagent"]
    assert stats["steps"] == {
        "complete": 1,
        "continue": 1,
        "no_effect": 1,
        "off_track": 1,
        "stuck": 0,
    }
    assert (stats["recoveries"], stats["recovered"], stats["recovery_rate"]) == (1, 1, 1.0)
    assert result["options"]["structagent_step_verifier"] is True


def test_without_the_step_verifier_the_actor_runs_until_it_reports(tmp_path, local_sandbox):
    del local_sandbox
    roles = Roles(
        plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE],
        verdicts=[_summary_verdict()],
    )
    actor = [
        bash(f"echo bye > {NOTE}"),
        bash(f"echo hello > {NOTE}; echo 'words: 1' > {SUMMARY}"),
        call("report", text="both written"),
    ]
    out = tmp_path / "run"
    result = run_task(
        _task(tmp_path), _config(step_verifier=False), out, model=RoutedModel(roles, actor)
    )
    assert result["status"] == "completed", result
    assert roles.seen["step"] == [] and _events(out, "structagent_step") == []
    assert result["options"]["structagent_step_verifier"] is False


def test_the_done_auditor_refuses_once_then_accepts(tmp_path, local_sandbox):
    del local_sandbox
    fail = {
        "analysis": "r2 rests on the claim only",
        "gaps": ["summary.txt's count is not read back"],
        "verdict": "FAIL",
    }
    roles = Roles(
        plans=[
            {"subgoal": "write both", "targets": ["r1", "r2"]},
            DONE,
            {"subgoal": f"Read {SUMMARY} back", "targets": ["r2"]},
            DONE,
        ],
        verdicts=[_summary_verdict(), _summary_verdict()],
        audits=[fail],  # then PASS
    )
    actor = [
        bash(f"echo hello > {NOTE}; echo 'words: 1' > {SUMMARY}"),
        call("report", text="both written"),
        bash(f"cat {SUMMARY}"),
        call("report", text="summary.txt reads words: 1"),
    ]
    out = tmp_path / "run"
    result = run_task(_task(tmp_path), _config(), out, model=RoutedModel(roles, actor))
    assert result["status"] == "completed" and result["score"] == 1.0, result
    audits = _events(out, "done_audit")
    assert [(a["verdict"], a["gaps"]) for a in audits] == [
        ("FAIL", ["summary.txt's count is not read back"]),
        ("PASS", []),
    ]
    # the auditor read the final structured state with its evidence and the DONE claim
    first = roles.seen["audit"][0]
    assert "[r1] VERIFIED by verifier after subgoal 1: '^hello$': found" in first
    assert "summary.txt reads 'words: 1'" in first and "<done-claim>\nboth files written" in first
    # its FAIL went back to the planner, which planned again
    assert (
        "the DONE auditor said FAIL: summary.txt's count is not read back" in roles.seen["plan"][2]
    )
    stats = result["control_stats"]["structagent"]
    assert (stats["audits"], stats["audit_refusals"], stats["done_refusals"]) == (2, 1, 1)
    assert result["options"]["structagent_auditor"] is True


def test_the_done_auditor_is_bounded_and_not_called_with_the_gate_on(tmp_path, local_sandbox):
    del local_sandbox
    fail = {"analysis": "", "gaps": ["no"], "verdict": "FAIL"}
    roles = Roles(
        plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE, DONE],
        verdicts=[_summary_verdict()],
        audits=[fail, fail],
    )
    actor = [
        bash(f"echo hello > {NOTE}; echo 'words: 1' > {SUMMARY}"),
        call("report", text="both written"),
    ]
    config = _config(max_done_refusals=2)
    result = run_task(_task(tmp_path), config, tmp_path / "run", model=RoutedModel(roles, actor))
    assert result["status"] == "done_refused", result
    assert len(roles.seen["audit"]) == 2
    # the gate on: the finish gate is the final audit, the auditor is not asked
    gated = Roles(
        plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE],
        verdicts=[_summary_verdict()],
    )
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    result = run_task(
        _task(tmp_path),
        _config(gate=True),
        tmp_path / "gated",
        model=RoutedModel(gated, list(actor)),
        gate_model=gate,
    )
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    assert gated.seen["audit"] == []


def test_with_a_screen_the_step_verifier_compares_screenshots(tmp_path, local_sandbox, monkeypatch):
    """The screenshots themselves are stand-ins here (the local sandbox has no desktop; the
    desktop suite's runs take real ones): what is checked is which ones each request shows."""
    del local_sandbox
    shots = iter(f"screen-{n}".encode() for n in range(10))
    monkeypatch.setattr(
        "harness.control.structagent.step_verifier.observe",
        lambda context, a11y=True: Observation("", [next(shots)]),
    )
    roles = Roles(plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE], verdicts=[])
    model = RoutedModel(roles, [bash("true"), bash("true"), call("report", text="none")])
    shown = []
    complete = model.complete

    def seeing(system, messages, tools):
        if system.startswith("You are the low-level step verifier"):
            blocks = messages[0]["content"]
            shown.append([base64.b64decode(b["source"]["data"]) for b in blocks if "source" in b])
        return complete(system, messages, tools)

    model.complete = seeing
    config = _config(max_subgoals=1)
    config.main.computer = True  # the run has a screen
    run_task(_task(tmp_path), config, tmp_path / "run", model=model)
    assert shown == [
        [b"screen-0", b"screen-1"],  # before, after
        [b"screen-0", b"screen-1", b"screen-2"],  # one earlier, before, after
    ]
    assert "1 earlier screenshot(s), then BEFORE and AFTER" in roles.seen["step"][1]
    assert "<file-changes>" not in roles.seen["step"][0]
