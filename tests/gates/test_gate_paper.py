"""`--gate-mode paper`: the paper's single prompt-level check on the live machine. On a deliverable
written to the wrong path the scripted gate model alone decides the round (a pass here, the false
pass the paper's audit counts), and the round record carries the structural annotation naming the
wrong path; the layered gate rejects the same state structurally without asking a model."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes import SandboxConfig
from tasks.schema import Task
from tests.conftest import require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TARGET = "/home/user/report.txt"


def the_task(tmp_path) -> Task:
    return Task.model_validate(
        {
            "id": "paper-gate",
            "instruction": f"Write the word hello into {TARGET}.",
            "config": [],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )


def agent_writing_to(path: str) -> ScriptedModel:
    steps = [
        ("bash", {"command": f"echo hello > {path}"}),
        ("bash", {"command": f"cat {path}"}),
        ("bash", {"command": "ls /home/user"}),
        ("finish", {"summary": "wrote hello"}),
    ]
    turns = [{"tool_calls": [{"name": name, "input": params}]} for name, params in steps]
    return ScriptedModel(turns * 3)


def gate_model(passed: bool) -> ScriptedModel:
    look = {"tool_calls": [{"name": "bash", "input": {"command": "ls -la /home/user"}}]}
    gaps = [] if passed else [f"{TARGET} does not exist"]
    verdict = {"tool_calls": [{"name": "verdict", "input": {"passed": passed, "gaps": gaps}}]}
    return ScriptedModel([look, verdict] * 3)


def run(tmp_path, mode: str, gate: ScriptedModel, path: str = "/home/user/reprot.txt"):
    require_image("base")
    config = RunConfig(model="script/agent", sandbox=SandboxConfig(image="base"))
    config.gate.mode = mode
    result = run_task(
        the_task(tmp_path), config, tmp_path / "run", model=agent_writing_to(path), gate_model=gate
    )
    return result, tmp_path / "run" / "gate"


def test_paper_gate_decides_by_the_model_alone_and_annotates_the_wrong_path(tmp_path):
    gate = gate_model(passed=True)
    result, gate_dir = run(tmp_path, "paper", gate)
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    assert result["gate_rounds"] == 1
    round_1 = json.loads((gate_dir / "round-1.json").read_text())
    assert round_1["passed"] is True and round_1["decided_by"] == "model"
    assert round_1["gate_mode"] == "paper"
    would_reject = round_1["structural_annotation"]["would_reject"]
    # names reach the gate as quoted data
    assert len(would_reject) == 1 and would_reject[0].startswith(f'"{TARGET}":')
    assert "/home/user/reprot.txt" in would_reject[0]  # the wrong path it was written to
    assert round_1["changed_during_round"] == []  # the gate only looked
    # Narration-blind: the model saw the instruction and nothing of the agent's story.
    first = gate.calls[0]["messages"][0]["content"][0]["text"]
    assert first == f"<instruction>\n{the_task(tmp_path).instruction}\n</instruction>"
    assert {tool.name for tool in gate.calls[0]["tools"]} == {
        "bash",
        "str_replace_based_edit_tool",
        "read_dom",
        "query_selector",
        "screenshot",
        "verdict",
    }


def test_paper_gate_rejection_is_the_models_and_the_right_path_has_no_annotation(tmp_path):
    result, gate_dir = run(tmp_path, "paper", gate_model(passed=False))
    assert result["status"] == "gate_rejected" and result["gate_rounds"] == 3, result
    round_3 = json.loads((gate_dir / "round-3.json").read_text())
    assert round_3["gap_layers"] == ["model"] and round_3["structural_annotation"]["would_reject"]

    honest = tmp_path / "honest"
    honest.mkdir()
    result, gate_dir = run(honest, "paper", gate_model(passed=True), path=TARGET)
    assert result["gate_passed"] is True, result
    round_1 = json.loads((gate_dir / "round-1.json").read_text())
    assert round_1["structural_annotation"]["would_reject"] == []


def test_layered_gate_rejects_the_same_wrong_path_without_a_model(tmp_path):
    gate = gate_model(passed=True)
    result, gate_dir = run(tmp_path, "layered", gate)
    round_1 = json.loads((gate_dir / "round-1.json").read_text())
    assert round_1["passed"] is False and round_1["gap_layers"] == ["structural"]
    assert gate.calls == []


def test_gate_mode_flag_is_checked(capsys, tmp_path):
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"id": "t", "instruction": "x"}))
    with pytest.raises(SystemExit) as exited:
        main(["run", str(task), "--model", "script/x", "--gate-mode", "loose"])
    assert exited.value.code == 2
    assert "--gate-mode" in capsys.readouterr().err
