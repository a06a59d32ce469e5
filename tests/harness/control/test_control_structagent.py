"""`--control structagent` through the real runner and a real (bubblewrap) sandbox with scripted
models: DONE is refused while an unprobed leaf has no verifier evidence, a later probe
INVALIDATES a VERIFIED requirement, a probe the verifier writes overrides its own claim, and each
failure inserts a recovery subgoal naming the requirement. Its ablations reach the options."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.models.scripted import ScriptedModel
from harness.reports.summary import summarize
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image
from tests.control_helpers import RoutedModel, bash, call

NOTE = "/home/user/note.txt"
SUMMARY = "/home/user/summary.txt"
REQUIREMENTS = [
    {
        "text": "note.txt says hello",
        "probe": {"kind": "file_grep", "path": NOTE, "patterns": ["^hello$"]},
    },
    {"text": "summary.txt gives the note's word count", "probe": None},
]


def _task(tmp_path) -> Task:
    (tmp_path / "expected.txt").write_text("hello\n")
    return Task.model_validate(
        {
            "id": "structagent",
            "instruction": f"Write hello into {NOTE} and its word count into {SUMMARY}.",
            "config": [],
            "evaluator": {
                "func": "compare_text_file",
                "result": {"type": "vm_file", "path": NOTE, "dest": "note.txt"},
                "expected": {"type": "local_file", "path": "expected.txt"},
            },
            "base_dir": tmp_path,
        }
    )


def _config(**structagent) -> RunConfig:
    config = RunConfig(model="script/test", control="structagent")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    for key, value in structagent.items():
        setattr(config.structagent, key, value)
    return config


CONTINUE = {"status": "continue", "evidence": "a step made", "feedback": ""}
PASS = {"analysis": "all shown", "gaps": [], "verdict": "PASS"}


class Roles:
    """Answers the initializer, the planner, the verifier, the low-level step verifier and the
    DONE auditor, each from its own list (the step verifier says `continue` and the auditor PASS
    once their lists are used up)."""

    def __init__(self, plans: list, verdicts: list, steps: list = (), audits: list = ()):
        self.plans, self.verdicts = list(plans), list(verdicts)
        self.steps, self.audits = list(steps), list(audits)
        self.seen: dict[str, list[str]] = {"plan": [], "verify": [], "step": [], "audit": []}

    def __call__(self, system: str, text: str):
        if system.startswith("You turn a computer-use task"):
            return REQUIREMENTS
        if system.startswith("You are the planner"):
            self.seen["plan"].append(text)
            return self.plans.pop(0)
        if system.startswith("You are the low-level step verifier"):
            self.seen["step"].append(text)
            return self.steps.pop(0) if self.steps else CONTINUE
        if system.startswith("You are the DONE auditor"):
            self.seen["audit"].append(text)
            return self.audits.pop(0) if self.audits else PASS
        self.seen["verify"].append(text)
        return self.verdicts.pop(0)


def _report(text: str) -> dict:
    return call("report", text=text)


DONE = {"done": True, "summary": "both files written"}


def test_done_waits_for_verifier_evidence_and_a_later_probe_invalidates(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    roles = Roles(
        plans=[{"subgoal": f"Write hello into {NOTE}", "targets": ["r1"]}, DONE, DONE],
        verdicts=[
            # the verifier claims r2 but its own probe says otherwise: the probe wins
            {
                "decisions": [
                    {
                        "id": "r2",
                        "verified": True,
                        "evidence": "looks right",
                        "probe": {"kind": "file_grep", "path": SUMMARY, "patterns": ["^words: 1$"]},
                    }
                ],
                "values": [],
            },
            {
                "decisions": [
                    {"id": "r2", "verified": True, "evidence": "summary.txt reads 'words: 1'"}
                ],
                "values": [{"name": "word count", "value": "1", "evidence": "cat summary.txt"}],
            },
        ],
    )
    actor = [
        bash(f"echo hello > {NOTE}"),
        _report("note written"),
        bash(f"echo bye > {NOTE}; echo 'words: 2' > {SUMMARY}"),  # undoes r1 while working on r2
        _report("summary written"),
        bash(f"echo 'words: 1' > {SUMMARY}"),
        _report("summary fixed"),
        bash(f"echo hello > {NOTE}"),
        _report("note restored"),
    ]
    model = RoutedModel(roles, actor)
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    out = tmp_path / "run"
    result = run_task(_task(tmp_path), _config(), out, model=model, gate_model=gate)
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    assert result["score"] == 1.0
    events = [json.loads(line) for line in (out / "trajectory.jsonl").open()]
    refused = [e for e in events if e["event"] == "done_refused"]
    assert [e["requirements"] for e in refused] == [["r2"]]  # r1 was VERIFIED, r2 had no evidence
    recoveries = [
        (e["requirement"], e["diagnosis"]) for e in events if e["event"] == "structagent_recovery"
    ]
    assert recoveries == [
        ("r2", "insufficient_evidence"),
        ("r2", "repeated_failure"),  # its verifier-written probe overrode the claim
        ("r1", "conflict"),  # VERIFIED, then contradicted by the stored probe
    ]
    subgoals = [e for e in events if e["event"] == "structagent_subgoal"]
    assert [s["origin"] for s in subgoals] == [
        "planner",
        "recovery: insufficient_evidence",
        "recovery: repeated_failure",
        "recovery: conflict",
    ]
    assert subgoals[1]["invalidated"] == ["r1"] and subgoals[1]["methods"] == {
        "r2": "probe:file_grep"
    }
    assert subgoals[2]["verified"] == ["r2"] and subgoals[3]["verified"] == ["r1"]
    changes = [
        (c["requirement"], c["after"])
        for c in map(json.loads, (out / "state.jsonl").read_text().splitlines())
        if c["type"] == "change"
    ]
    assert changes == [
        ("r1", "VERIFIED"),
        ("r1", "INVALIDATED"),
        ("r2", "VERIFIED"),
        ("r1", "VERIFIED"),
    ]
    values = [json.loads(line) for line in (out / "state.jsonl").read_text().splitlines()]
    assert {"name": "word count", "value": "1"}.items() <= next(
        v for v in values if v["type"] == "value" and v["name"] == "word count"
    ).items()
    recovery_seed = json.dumps(model.script.calls[2]["messages"][0])  # the second actor's task
    assert "[r2] has no verified evidence yet" in recovery_seed
    assert result["options"]["structagent_verifier"] == "structured"
    assert roles.seen["audit"] == []  # the gate is on: it is the final audit


def test_a_claim_without_evidence_commits_nothing_and_done_ends_refused(tmp_path, local_sandbox):
    del local_sandbox
    silent = {"decisions": [{"id": "r2", "verified": True, "evidence": ""}], "values": []}
    roles = Roles(plans=[DONE, DONE], verdicts=[silent, silent])
    actor = [bash(f"echo hello > {NOTE}"), _report("done")] + [bash("true"), _report("counted")] * 2
    config = _config(max_done_refusals=2)
    config.gate.enabled = False
    result = run_task(_task(tmp_path), config, tmp_path / "run", model=RoutedModel(roles, actor))
    assert result["status"] == "done_refused", result
    events = [json.loads(line) for line in (tmp_path / "run" / "trajectory.jsonl").open()]
    refused = [e["requirements"] for e in events if e["event"] == "done_refused"]
    assert refused == [["r1", "r2"], ["r2"]]  # r1's probe verified it; r2's claim had no evidence
    assert len(roles.seen["verify"]) == 2


def test_without_the_verifier_the_actor_report_commits_and_the_options_say_so(
    tmp_path, local_sandbox
):
    del local_sandbox
    roles = Roles(plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE], verdicts=[])
    actor = [bash(f"echo hello > {NOTE}"), _report("both written")]
    config = _config(verifier="off")
    config.gate.enabled = False
    out = tmp_path / "run"
    result = run_task(_task(tmp_path), config, out, model=RoutedModel(roles, actor))
    assert result["status"] == "completed", result
    assert roles.seen["verify"] == []  # no verifier call was made
    changes = [json.loads(line) for line in (out / "state.jsonl").read_text().splitlines()]
    sources = {c["requirement"]: c["source"] for c in changes if c["type"] == "change"}
    assert sources == {"r1": "actor report (no verifier)", "r2": "actor report (no verifier)"}
    assert result["options"]["structagent_verifier"] == "off"


def test_structagent_ablations_reach_the_options_and_a_two_arm_summary(
    tmp_path, capsys, local_sandbox
):
    del local_sandbox
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "t", "instruction": f"Write hello into {NOTE}."}))
    script = tmp_path / "script.json"
    lines = []
    for arm, extra in (
        ("full", []),
        (
            "ablated",
            [
                "--structagent-without",
                "memory",
                "--structagent-verifier",
                "visual",
                "--structagent-step-verifier",
                "off",
                "--structagent-without",
                "auditor",
            ],
        ),
    ):
        script.write_text(
            json.dumps(
                [{"text": json.dumps(REQUIREMENTS)}, {"text": json.dumps({"infeasible": "stop"})}]
            )
        )
        out = tmp_path / arm
        argv = [
            "run",
            str(task),
            "--model",
            f"script/{script}",
            "--sandbox",
            "local",
            "--control",
            "structagent",
            "--out",
            str(out),
            *extra,
        ]
        main(argv)
        lines.append(json.loads((out / "result.json").read_text()))
    assert [r["options"]["structagent_memory"] for r in lines] == [True, False]
    assert [r["options"]["structagent_verifier"] for r in lines] == ["structured", "visual"]
    assert [r["options"]["structagent_step_verifier"] for r in lines] == [True, False]
    assert [r["options"]["structagent_auditor"] for r in lines] == [True, False]
    summary = summarize(lines)
    assert summary["by_option"]["structagent_verifier"]["visual"]["tasks"] == 1
    assert summary["by_option"]["structagent_memory"]["true"]["tasks"] == 1
    code = main(
        [
            "run",
            str(task),
            "--model",
            f"script/{script}",
            "--out",
            str(tmp_path / "bad"),
            "--structagent-without",
            "brains",
        ]
    )
    assert code == 2 and "'brains' is not a mechanism" in capsys.readouterr().err


def _rollout_model() -> RoutedModel:
    verdict = {"decisions": [{"id": "r2", "verified": True, "evidence": "summary.txt: words: 1"}]}
    roles = Roles(
        plans=[{"subgoal": "write both files", "targets": ["r1", "r2"]}, DONE],
        verdicts=[{**verdict, "values": []}],
    )
    actor = [bash(f"echo hello > {NOTE}; echo 'words: 1' > {SUMMARY}"), _report("both written")]
    return RoutedModel(roles, actor)


@pytest.mark.parametrize("judge", [True, False])
def test_best_of_two_is_chosen_by_the_judge_comparing_final_states(
    tmp_path, local_sandbox, monkeypatch, judge
):
    del local_sandbox
    pick = ScriptedModel([{"text": json.dumps({"best": 2, "reason": "r2 has a probe"})}])
    built = []
    monkeypatch.setattr(
        "harness.control.structagent.judge.make_model",
        lambda spec, options: built.append(spec) or pick,
    )
    config = _config(judge=judge, judge_model="script/judge")
    config.best_of, config.gate.enabled = 2, False
    out = tmp_path / "run"
    models = [_rollout_model(), _rollout_model()]
    result = run_task(_task(tmp_path), config, out, model=models)
    assert result["status"] == "completed" and result["score"] == 1.0, result
    reasons = result["best_of"]["reasons"]
    if not judge:  # the fixed ranking: tied, so the first
        assert result["best_of"]["selected"] == 1 and reasons[-1].endswith("the first")
        return
    assert result["best_of"]["selected"] == 2
    assert reasons[-1] == "selected rollout 2: the judge compared the final states: r2 has a probe"
    asked = [
        json.loads(line)
        for line in (out / "trajectory.jsonl").read_text().splitlines()
        if '"bbon-judge"' in line
    ]
    assert len(asked) == 1 and asked[0]["error"] is None and built == ["script/judge"]
    seen = pick.calls[0]["messages"][0]["content"][0]["text"]
    assert '<candidate rollout="1">' in seen and '<candidate rollout="2">' in seen
    # each candidate's final state, checked again on its own sandbox, and what it changed
    assert seen.count("[r1] VERIFIED: note.txt says hello ('^hello$': found)") == 2
    assert "subgoal 1: write both files -> verified ['r1', 'r2']" in seen
    assert "/home/user/summary.txt (9 bytes)" in seen
    assert result["options"]["structagent_judge"] is True


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.desktop
def test_the_initializer_sees_the_screen_and_the_accessibility_tree(tmp_path):
    require_image("desktop")
    roles = Roles(plans=[{"infeasible": "scripted stop"}], verdicts=[])
    model, shown = RoutedModel(roles), []
    complete = model.complete
    model.complete = lambda system, messages, tools: (
        shown.append([b["type"] for b in messages[0]["content"]])
        or complete(system, messages, tools)
    )
    config = _config()
    config.sandbox.backend, config.sandbox.image = "docker", "desktop"
    config.subagents.enabled = ["gui"]
    result = run_task(_task(tmp_path), config, tmp_path / "run", model=model)
    assert result["status"] == "infeasible", result
    init = model.planner_calls[0]
    assert init["system"].startswith("You turn a computer-use task")
    assert "<accessibility-tree>" in init["text"] and "desktop-frame" in init["text"]
    assert shown[0] == ["image", "text"]  # the initial screenshot, then the instruction and tree
    request = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
        if '"purpose": "task_state"' in line
    ]
    assert len(request) == 1


def test_the_visual_only_verifier_runs_no_probe(tmp_path, local_sandbox):
    del local_sandbox
    claim = {
        "decisions": [
            {"id": "r1", "verified": True, "evidence": "the screen shows the note"},
            {
                "id": "r2",
                "verified": True,
                "evidence": "the screen shows 1 word",
                "probe": {"kind": "file_exists", "path": "/nope"},
            },
        ],
        "values": [],
    }
    roles = Roles(
        plans=[{"subgoal": "write both", "targets": ["r1", "r2"]}, DONE], verdicts=[claim]
    )
    actor = [bash(f"echo bye > {NOTE}"), _report("written")]  # the wrong word: only a probe sees it
    config = _config(verifier="visual")
    config.gate.enabled = False
    out = tmp_path / "run"
    result = run_task(_task(tmp_path), config, out, model=RoutedModel(roles, actor))
    assert result["status"] == "completed" and result["score"] == 0.0, result  # fooled, as measured
    assert (
        "<checks>" not in roles.seen["verify"][0] and "stored probe" not in roles.seen["verify"][0]
    )
    changes = [json.loads(line) for line in (out / "state.jsonl").read_text().splitlines()]
    sources = {c["requirement"]: c["source"] for c in changes if c["type"] == "change"}
    assert sources == {"r1": "visual verifier", "r2": "visual verifier"}  # its probe was not run
