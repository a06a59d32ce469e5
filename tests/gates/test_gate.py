"""The narration-blind finish gate against real sandboxes, with scripted agent and gate models."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gates.probes import run_probe, validate_probe
from harness.kernel.core import ToolError
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image

SECRET = "SECRET-NARRATIVE-42"


def bash(command: str) -> dict:
    return {
        "text": f"{SECRET}: running {command[:20]}",
        "tool_calls": [{"name": "bash", "input": {"command": command}}],
    }


def finish() -> dict:
    return {
        "text": f"{SECRET} all done",
        "tool_calls": [{"name": "finish", "input": {"summary": f"{SECRET} claims success"}}],
    }


def verdict(passed: bool, gaps=()) -> dict:
    return {"tool_calls": [{"name": "verdict", "input": {"passed": passed, "gaps": list(gaps)}}]}


def task(tmp_path: Path, instruction: str, evaluator: dict | None = None) -> Task:
    return Task.model_validate(
        {
            "id": "gate-test",
            "instruction": instruction,
            "config": [],
            "evaluator": evaluator or {},
            "base_dir": tmp_path,
        }
    )


def run(
    tmp_path: Path, the_task: Task, agent_turns: list, gate_turns: list
) -> tuple[dict, ScriptedModel]:
    require_image("base")
    config = RunConfig(model="script/test")
    config.sandbox.image = "base"
    gate_model = ScriptedModel(gate_turns)
    result = run_task(
        the_task, config, tmp_path / "run", model=ScriptedModel(agent_turns), gate_model=gate_model
    )
    return result, gate_model


def gate_round(tmp_path: Path, number: int) -> dict:
    return json.loads((tmp_path / "run" / "gate" / f"round-{number}.json").read_text())


@pytest.mark.docker
@pytest.mark.slow
def test_wrong_path_is_rejected_structurally_then_fixed(tmp_path):
    the_task = task(
        tmp_path, "Create /home/user/reports/summary.csv with the single line `name,total`."
    )
    agent = [
        bash("echo 'name,total' > /home/user/summary.csv"),
        bash("cat /home/user/summary.csv"),
        bash("ls /home/user"),
        finish(),
        bash("mkdir -p /home/user/reports && mv /home/user/summary.csv /home/user/reports/"),
        finish(),
    ]
    result, gate_model = run(tmp_path, the_task, agent, [verdict(True)])
    assert result["status"] == "completed" and result["gate_rounds"] == 2 and result["gate_passed"]
    first = gate_round(tmp_path, 1)
    assert first["source"] == "structural" and not first["passed"]
    assert (
        "/home/user/reports/summary.csv" in first["gaps"][0]
        and "/home/user/summary.csv" in first["gaps"][0]
    )
    assert len(gate_model.calls) == 1  # the structural rejection needed no model call
    for call in gate_model.calls:  # narration-blind: nothing the agent said reaches the gate
        assert SECRET not in json.dumps(call, default=str)
    assert "/home/user/reports/summary.csv" in json.dumps(gate_model.calls[0]["messages"])


@pytest.mark.docker
@pytest.mark.slow
def test_a_lock_file_alone_is_a_finding_for_the_model_not_a_rejection(tmp_path):
    the_task = task(tmp_path, "Write 'hello' into /home/user/notes.docx.")
    create = (
        "python3 -c \"import docx; d = docx.Document(); d.add_paragraph('hello'); "
        "d.save('/home/user/notes.docx')\""
    )
    agent = [
        bash(create),
        bash("touch '/home/user/.~lock.notes.docx#'"),
        bash("ls -a"),
        finish(),
    ]
    result, gate_model = run(tmp_path, the_task, agent, [verdict(True)])
    assert result["status"] == "completed" and result["gate_rounds"] == 1 and result["gate_passed"]
    first = gate_round(tmp_path, 1)
    assert first["passed"] and first["source"] == "model"
    lock = [f for f in first["structural"] if f["check"] == "open"]
    assert len(lock) == 1 and not lock[0]["ok"] and not lock[0]["definite"]
    # The finding reaches the gate model, which decides from the file's content.
    assert ".~lock.notes.docx#" in json.dumps(gate_model.calls[0]["messages"])


@pytest.mark.docker
@pytest.mark.slow
def test_three_rejections_end_the_run(tmp_path):
    the_task = task(tmp_path, "Write 'hello' into /home/user/notes.docx.")
    agent = [
        bash("echo hello > /home/user/notes.docx"),
        bash("ls -a"),
        bash("cat /home/user/notes.docx"),
        finish(),
        finish(),
        finish(),
        finish(),
    ]
    result, gate_model = run(tmp_path, the_task, agent, [])
    assert (
        result["status"] == "gate_rejected"
        and result["gate_rounds"] == 3
        and result["gate_passed"] is False
    )
    for number in (1, 2, 3):
        round_n = gate_round(tmp_path, number)
        assert round_n["gap_layers"] == ["structural"]
        assert any("the content is plain text" in gap for gap in round_n["gaps"])
    assert gate_model.calls == []


@pytest.mark.docker
@pytest.mark.slow
def test_gate_cannot_change_the_state_it_judges(tmp_path):
    content = "important result\n"
    digest = hashlib.sha256(content.encode()).hexdigest()
    evaluator = {
        "func": "check_include_exclude",
        "result": {
            "type": "vm_command_line",
            "command": "sha256sum /home/user/result.txt",
            "shell": True,
        },
        "expected": {"type": "rule", "rules": {"include": [digest], "exclude": []}},
    }
    the_task = task(tmp_path, "Write 'important result' into /home/user/result.txt.", evaluator)
    agent = [
        bash("echo 'important result' > /home/user/result.txt"),
        bash("cat result.txt"),
        bash("ls"),
        finish(),
    ]
    gate = [
        {
            "tool_calls": [
                {
                    "name": "bash",
                    "input": {
                        "command": "rm /home/user/result.txt; echo x > /home/user/result2.txt"
                    },
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "str_replace_based_edit_tool",
                    "input": {
                        "command": "create",
                        "path": "/home/user/result.txt",
                        "file_text": "forged",
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "probe", "input": {"spec": {"kind": "xlsx_cells"}}}]},
        verdict(True),
    ]
    result, gate_model = run(tmp_path, the_task, agent, gate)
    assert (
        result["status"] == "completed" and result["score"] == 1.0
    )  # the real file is byte-identical
    transcript = json.dumps(gate_round(tmp_path, 1)["transcript"])
    assert "is not available here" in transcript  # editor mutations are not offered to the gate
    assert "field `path`" in transcript  # a malformed probe is a tool error naming the field


def test_xlsx_cells_probe_reads_formula_text(local_sandbox):
    script = (
        "import openpyxl; wb = openpyxl.Workbook(); ws = wb.active; ws['A1'] = 2; ws['A2'] = 3; "
        "ws['B1'] = '=SUM(A1:A2)'; wb.save('/home/user/book.xlsx')"
    )
    local_sandbox.call("python.run", code=script)
    spec = validate_probe(
        {
            "kind": "xlsx_cells",
            "path": "/home/user/book.xlsx",
            "cells": ["B1"],
            "expect": {"B1": {"formula": "=SUM(A1:A2)"}},
        }
    )
    outcome = run_probe(spec, local_sandbox)
    assert outcome.verdict is True and "formula='=SUM(A1:A2)'" in outcome.evidence
    wrong = validate_probe(
        {"kind": "xlsx_cells", "path": "/home/user/book.xlsx", "expect": {"B1": {"value": 5}}}
    )
    assert (
        run_probe(wrong, local_sandbox).verdict is False
    )  # no cached value: a formula is not its value
    missing = validate_probe({"kind": "file_exists", "path": "/home/user/nothing.xlsx"})
    assert run_probe(missing, local_sandbox).verdict is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cat", "a.txt|rm -rf /"], "metacharacters"),
        (["rm", "-rf", "/home/user"], "not an allowed read-only program"),
        (["bash", "-c", "ls"], "not an allowed read-only program"),
        (["find", "/home/user", "-delete"], "not a known read-only"),
        (["sqlite3", "db.sqlite", "select 1"], "-readonly"),
    ],
)
def test_shell_probe_validation_refuses_mutations(argv, message):
    with pytest.raises(ToolError, match=message):
        validate_probe({"kind": "shell_command", "argv": argv})


def test_malformed_probe_specs_name_the_field():
    with pytest.raises(ToolError, match="field `kind`"):
        validate_probe({"kind": "teleport"})
    with pytest.raises(ToolError, match="field `patterns`"):
        validate_probe({"kind": "file_grep", "path": "/x", "patterns": ["("]})
    with pytest.raises(ToolError, match="field `query`"):
        validate_probe({"kind": "sqlite_query", "path": "/x.db", "query": "DELETE FROM t"})


def test_url_match_reads_the_saved_browser_history(local_sandbox):
    script = (
        "import os, sqlite3; os.makedirs('/home/user/.config/chromium/Default', exist_ok=True)\n"
        "db = sqlite3.connect('/home/user/.config/chromium/Default/History')\n"
        "db.execute('CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, last_visit_time "
        "INTEGER)')\n"
        "db.executemany('INSERT INTO urls (url, last_visit_time) VALUES (?, ?)', "
        "[('http://127.0.0.1:8000/old', 1), ('http://127.0.0.1:8000/checkout?done=1', 2)])\n"
        "db.commit(); db.close()"
    )
    local_sandbox.call("python.run", code=script)
    hit = run_probe(
        validate_probe({"kind": "url_match", "pattern": r"/checkout\?done=1$"}), local_sandbox
    )
    assert hit.verdict is True and "checkout" in hit.evidence
    miss = run_probe(validate_probe({"kind": "url_match", "pattern": "/old$"}), local_sandbox)
    assert miss.verdict is False


def test_an_untouched_file_the_instruction_asks_to_change_is_rejected(local_sandbox):
    import time

    from gates.structural import check_deliverables

    local_sandbox.call("bash.run", command="echo 'a,b' > /home/user/table.csv")
    started = time.time() + 0.01
    time.sleep(0.05)
    instruction = "Sort the rows of /home/user/table.csv by the first column and save it."
    present = {"/home/user/table.csv": True}
    untouched = check_deliverables(local_sandbox, instruction, present, [])
    assert any("no file was written during the run" in gap for gap in untouched.definite_gaps)
    elsewhere = [{"path": "/home/user/table.sorted.csv", "mtime": 0, "size": 4}]
    assert not check_deliverables(local_sandbox, instruction, present, elsewhere).definite_gaps
    local_sandbox.call("bash.run", command="echo 'a,b' > /home/user/table.csv")
    changed = local_sandbox.call("fs.changed", since=started)["paths"]
    assert not check_deliverables(local_sandbox, instruction, present, changed).definite_gaps
    reading = "Count the rows of /home/user/table.csv and tell me."  # no change asked: no gap
    assert not check_deliverables(local_sandbox, reading, present, []).definite_gaps
